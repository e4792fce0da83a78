using System.Text.RegularExpressions;
using Microsoft.Azure.Cosmos;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace EmbeddedCosmos.Tests;

/// <summary>
/// Every query the embedded server's SQL page (packages/embedded-cosmos/docs/sql.md) lists as
/// supported, run through the .NET SDK, paged two results at a time, across partitions and in
/// one, against the same query written in LINQ to Objects over the same items. A row added to the
/// page without its LINQ here fails the test.
/// </summary>
[Collection("server")]
public class QueryFormsTests(EmbeddedServer server)
{
    public record Item(string id, string pk, int n, string kind, string[] tags);

    private static readonly string[] Kinds = ["a", "b", "c"];
    private static readonly List<Item> Items = Enumerable.Range(0, 30)
        .Select(i => new Item($"d{i}", $"p{i % 5}", i, Kinds[i * 7 % 3], i % 2 == 0 ? ["x", "y"] : ["z"]))
        .ToList();

    private enum Order { Any, Exact, CountOnly }

    /// <summary>Each supported query of the page: its LINQ, and whether the SDK's order is defined (ORDER BY) or only the count is (OFFSET without ORDER BY).</summary>
    private static readonly Dictionary<string, (Func<IEnumerable<Item>, IEnumerable<object>> linq, Order order)> Expected = new()
    {
        ["SELECT c.id, c.n AS number FROM c"] = (items => items.Select(i => new { i.id, number = i.n }), Order.Any),
        ["SELECT VALUE c.id FROM c WHERE c.n BETWEEN 1 AND 3 AND c.kind IN (\"a\", \"b\")"] = (items => items.Where(i => i.n is >= 1 and <= 3 && i.kind is "a" or "b").Select(i => i.id), Order.Any),
        ["SELECT VALUE c.id FROM c WHERE c.n = @n"] = (items => items.Where(i => i.n == 2).Select(i => i.id), Order.Any),
        ["SELECT VALUE c.id FROM c ORDER BY c.n DESC"] = (items => items.OrderByDescending(i => i.n).Select(i => i.id), Order.Exact),
        ["SELECT TOP 2 VALUE c.id FROM c ORDER BY c.n"] = (items => items.OrderBy(i => i.n).Take(2).Select(i => i.id), Order.Exact),
        ["SELECT VALUE t FROM c JOIN t IN c.tags WHERE t = \"x\""] = (items => items.SelectMany(i => i.tags).Where(t => t == "x"), Order.Any),
        ["SELECT VALUE COUNT(1) FROM c"] = (items => [items.Count()], Order.Any),
        ["SELECT VALUE c.id FROM c WHERE STARTSWITH(c.kind, \"a\")"] = (items => items.Where(i => i.kind.StartsWith('a')).Select(i => i.id), Order.Any),
        ["SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, \"x\") AND IS_DEFINED(c.n)"] = (items => items.Where(i => i.tags.Contains("x")).Select(i => i.id), Order.Any),
        ["SELECT DISTINCT VALUE c.kind FROM c"] = (items => items.Select(i => i.kind).Distinct(), Order.Any),
        ["SELECT VALUE c.id FROM c OFFSET 1 LIMIT 2"] = (items => items.Skip(1).Take(2).Select(i => i.id), Order.CountOnly),
        ["SELECT DISTINCT VALUE c.kind FROM c OFFSET 0 LIMIT 1"] = (items => items.Select(i => i.kind).Distinct().Take(1), Order.CountOnly),
        ["SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 1 LIMIT 1"] = (items => items.OrderBy(i => i.n).Skip(1).Take(1).Select(i => i.id), Order.Exact),
        ["SELECT VALUE c.id FROM c WHERE c.kind NOT IN (\"a\") AND c.n NOT BETWEEN 4 AND 5"] = (items => items.Where(i => i.kind != "a" && i.n is not (>= 4 and <= 5)).Select(i => i.id), Order.Any),
        ["SELECT VALUE c.id FROM c WHERE c.kind LIKE \"[a-b]%\" AND NOT (c.kind LIKE \"b\") AND c.id LIKE \"d!%%\" ESCAPE \"!\" = false"] = (items => items.Where(i => i.kind == "a").Select(i => i.id), Order.Any),
        ["SELECT VALUE IIF(c.n > 1, \"big\", \"small\") FROM c"] = (items => items.Select(i => i.n > 1 ? "big" : "small"), Order.Any),
        ["SELECT VALUE c.id FROM c WHERE StringEquals(c.kind, \"A\", true) OR CONTAINS(c.kind, \"B\", true)"] = (items => items.Where(i => i.kind is "a" or "b").Select(i => i.id), Order.Any),
        ["SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS_ANY(c.tags, \"x\", \"q\") AND ARRAY_CONTAINS_ALL(c.tags, \"x\")"] = (items => items.Where(i => i.tags.Contains("x")).Select(i => i.id), Order.Any),
        ["SELECT VALUE [StringToArray(\"[1, 2]\"), StringToObject('{\"a\": 1}')] FROM c"] = (items => items.Select(_ => new object[] { new[] { 1, 2 }, new { a = 1 } }), Order.Any),
        ["SELECT VALUE [DateTimePart(\"dd\", DateTimeAdd(\"dd\", 1, \"2026-01-31T00:00:00.0000000Z\")), DateTimeDiff(\"mm\", \"2026-01-31T00:00:00Z\", \"2026-03-01T00:00:00Z\"), DateTimePart(\"ms\", \"2026-01-01T00:00:00.1234567Z\")] FROM c"] = (items => items.Select(_ => new[] { 1, 2, 123 }), Order.Any),
        ["SELECT VALUE [GetCurrentDateTime() > \"2026-01-01\", GetCurrentTimestamp() > 0, GetCurrentTicks() > 0] FROM c"] = (items => items.Select(_ => new[] { true, true, true }), Order.Any),
        ["SELECT c.kind, COUNT(1) AS n, AVG(c.n) AS mean FROM c GROUP BY c.kind"] = (items => items.GroupBy(i => i.kind).Select(g => new { kind = g.Key, n = g.Count(), mean = g.Average(i => (double)i.n) }), Order.Any),
    };

    /// <summary>The example of every row the page marks "supported".</summary>
    private static List<string> SupportedQueries() =>
        File.ReadAllLines(Path.Combine(EmbeddedServer.Root(), "packages", "embedded-cosmos", "docs", "sql.md"))
            .Select(line => Regex.Match(line, @"^\| .* \| `(SELECT [^`]*)` \| supported"))
            .Where(m => m.Success)
            .Select(m => m.Groups[1].Value)
            .ToList();

    /// <summary>A result as JSON text, every number as a double (the server's 15 and LINQ's 15.0 are one value).</summary>
    private static string Json(object value)
    {
        static JToken Numbers(JToken token) => token switch
        {
            JValue { Type: JTokenType.Integer or JTokenType.Float } number => new JValue(number.Value<double>()),
            JObject obj => new JObject(obj.Properties().Select(p => new JProperty(p.Name, Numbers(p.Value)))),
            JArray array => new JArray(array.Select(Numbers)),
            _ => token,
        };
        return Numbers(value as JToken ?? JToken.FromObject(value)).ToString(Formatting.None);
    }

    [Fact]
    public async Task EverySupportedQueryOfTheSqlPageMatchesLinqAcrossPartitionsAndInOne()
    {
        var queries = SupportedQueries();
        Assert.True(queries.Count >= 14, $"only {queries.Count} supported rows found in sql.md");
        var missing = queries.Where(q => !Expected.ContainsKey(q)).ToList();
        Assert.True(missing.Count == 0, $"sql.md lists queries this test has no LINQ for: {string.Join("; ", missing)}");

        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("query-forms")).Database;
        var response = await db.CreateContainerIfNotExistsAsync(new ContainerProperties("items", "/pk"));
        if (response.StatusCode == System.Net.HttpStatusCode.Created)
            foreach (var item in Items) await response.Container.CreateItemAsync(item, new PartitionKey(item.pk));

        foreach (var query in queries)
        {
            var (linq, order) = Expected[query];
            foreach (var partition in new string?[] { null, "p2" })
            {
                var options = new QueryRequestOptions { MaxItemCount = 2, PartitionKey = partition == null ? null : new PartitionKey(partition) };
                var actual = (await CrudTests.ReadAll(response.Container.GetItemQueryIterator<JToken>(new QueryDefinition(query).WithParameter("@n", 2), requestOptions: options))).Select(Json).ToList();
                var expected = linq(Items.Where(i => partition == null || i.pk == partition)).Select(Json).ToList();
                var where = $"{query} ({partition ?? "all partitions"})";
                switch (order)
                {
                    case Order.Exact:
                        Assert.True(expected.SequenceEqual(actual), $"{where}: expected [{string.Join(",", expected)}], got [{string.Join(",", actual)}]");
                        break;
                    case Order.Any:
                        Assert.True(expected.Order().SequenceEqual(actual.Order()), $"{where}: expected [{string.Join(",", expected.Order())}], got [{string.Join(",", actual.Order())}]");
                        break;
                    case Order.CountOnly:
                        Assert.True(expected.Count == actual.Count && actual.Distinct().Count() == actual.Count, $"{where}: expected {expected.Count} distinct results, got [{string.Join(",", actual)}]");
                        break;
                }
            }
        }
    }
}
