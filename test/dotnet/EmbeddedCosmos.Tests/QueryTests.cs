using Microsoft.Azure.Cosmos;

namespace EmbeddedCosmos.Tests;

/// <summary>Queries as the .NET SDK runs them (its own query plan and cross-partition merge), checked against LINQ to Objects over the same data.</summary>
[Collection("server")]
public class QueryTests(EmbeddedServer server)
{
    private static readonly List<Note> Notes = Enumerable.Range(0, 60).Select(i => new Note($"q{i}", $"p{i % 9}", (i * 37) % 61, i % 4 == 0 ? "four" : null)).ToList();
    private Container? container;

    private async Task<Container> Container()
    {
        if (container != null) return container;
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("queries")).Database;
        var response = await db.CreateContainerIfNotExistsAsync(new ContainerProperties("notes", "/pk"));
        if (response.StatusCode == System.Net.HttpStatusCode.Created)
            foreach (var note in Notes) await response.Container.CreateItemAsync(note, new PartitionKey(note.pk));
        return container = response.Container;
    }

    private async Task<List<T>> Run<T>(string sql, int pageSize = 7) =>
        await CrudTests.ReadAll((await Container()).GetItemQueryIterator<T>(sql, requestOptions: new QueryRequestOptions { MaxItemCount = pageSize }));

    [Fact]
    public async Task OrderByAcrossPartitionsPagedReturnsEachItemOnceInOrder()
    {
        var ascending = await Run<Note>("SELECT * FROM c ORDER BY c.n");
        Assert.Equal(Notes.OrderBy(n => n.n).Select(n => n.n), ascending.Select(n => n.n));
        Assert.Equal(60, ascending.Select(n => n.id).Distinct().Count());
        // Ties across pages: the SDK resumes after the last (value, _rid) it saw.
        var byPartition = await Run<Note>("SELECT * FROM c ORDER BY c.pk", pageSize: 4);
        Assert.Equal(Notes.OrderBy(n => n.pk, StringComparer.Ordinal).Select(n => n.pk), byPartition.Select(n => n.pk));
        Assert.Equal(60, byPartition.Select(n => n.id).Distinct().Count());
        var descending = await Run<Note>("SELECT * FROM c ORDER BY c.n DESC", pageSize: 5);
        Assert.Equal(Notes.OrderByDescending(n => n.n).Select(n => n.n), descending.Select(n => n.n));
    }

    [Fact]
    public async Task AnOrderByResumedFromItsContinuationTokenInANewIteratorGoesOnWhereItStopped()
    {
        var target = await Container();
        foreach (var sql in new[] { "SELECT * FROM c ORDER BY c.n", "SELECT * FROM c ORDER BY c.pk", "SELECT * FROM c ORDER BY c.pk DESC" })
        {
            var seen = new List<Note>();
            string? continuation = null;
            do
            {
                // Each page from a new iterator, as a web API pages for its clients.
                var iterator = target.GetItemQueryIterator<Note>(sql, continuation, new QueryRequestOptions { MaxItemCount = 6 });
                var page = await iterator.ReadNextAsync();
                seen.AddRange(page);
                continuation = page.ContinuationToken;
            } while (continuation != null);
            Assert.True(60 == seen.Count, $"{sql}: {seen.Count} results, missing {string.Join(",", Notes.Select(n => n.id).Except(seen.Select(n => n.id)))}, twice {string.Join(",", seen.GroupBy(n => n.id).Where(g => g.Count() > 1).Select(g => g.Key))}; order {string.Join(",", seen.Select(n => n.id))}");
            Assert.Equal(60, seen.Select(n => n.id).Distinct().Count());
        }
    }

    [Fact]
    public async Task FiltersProjectionsTopAndAggregatesMatchLinq()
    {
        Assert.Equal(Notes.Count(n => n.n > 30), (await Run<Note>("SELECT * FROM c WHERE c.n > 30")).Count);
        Assert.Equal(Notes.OrderBy(n => n.n).Take(5).Select(n => n.id), (await Run<Note>("SELECT TOP 5 * FROM c ORDER BY c.n")).Select(n => n.id));
        Assert.Equal(Notes.Sum(n => n.n), (await Run<long>("SELECT VALUE SUM(c.n) FROM c")).Single());
        Assert.Equal(Notes.Count(n => n.text == "four"), (await Run<long>("SELECT VALUE COUNT(1) FROM c WHERE c.text = 'four'")).Single());
        Assert.Equal(Notes.Max(n => n.n), (await Run<long>("SELECT VALUE MAX(c.n) FROM c")).Single());
        Assert.Equal(Notes.Select(n => n.pk).Distinct().OrderBy(p => p), (await Run<string>("SELECT DISTINCT VALUE c.pk FROM c")).OrderBy(p => p));
    }

    [Fact]
    public async Task GroupByWithEveryAggregateMatchesLinq()
    {
        var groups = await Run<Group>("SELECT c.pk, COUNT(1) AS count, SUM(c.n) AS total, MIN(c.n) AS least, MAX(c.n) AS most, AVG(c.n) AS mean FROM c GROUP BY c.pk", pageSize: 4);
        var expected = Notes.GroupBy(n => n.pk).Select(g => new Group(g.Key, g.Count(), g.Sum(n => n.n), g.Min(n => n.n), g.Max(n => n.n), g.Average(n => n.n)));
        Assert.Equal(expected.OrderBy(g => g.pk).Select(Rounded), groups.OrderBy(g => g.pk).Select(Rounded));
        var counts = await Run<long>("SELECT VALUE COUNT(1) FROM c WHERE c.n > 20 GROUP BY c.text");
        Assert.Equal(Notes.Where(n => n.n > 20).GroupBy(n => n.text).Select(g => (long)g.Count()).Order(), counts.Order());
        var pairs = await Run<Pair>("SELECT c.text, c.n > 30 AS big, COUNT(1) AS count FROM c GROUP BY c.text, c.n > 30");
        Assert.Equal(
            Notes.GroupBy(n => (n.text, n.n > 30)).Select(g => new Pair(g.Key.text, g.Key.Item2, g.Count())).OrderBy(p => p.ToString()),
            pairs.OrderBy(p => p.ToString()));
    }

    [Fact]
    public async Task OrderByWithOffsetLimitMatchesLinq()
    {
        var window = await Run<Note>("SELECT * FROM c ORDER BY c.n DESC OFFSET 10 LIMIT 15", pageSize: 4);
        Assert.Equal(Notes.OrderByDescending(n => n.n).Skip(10).Take(15).Select(n => n.n), window.Select(n => n.n));
        var ids = await Run<string>("SELECT VALUE c.id FROM c WHERE c.pk = 'p3' ORDER BY c.n OFFSET 2 LIMIT 3");
        Assert.Equal(Notes.Where(n => n.pk == "p3").OrderBy(n => n.n).Skip(2).Take(3).Select(n => n.id), ids);
    }

    private static Group Rounded(Group g) => g with { mean = Math.Round(g.mean, 9) };
}

public record Group(string pk, long count, long total, long least, long most, double mean);
public record Pair(string? text, bool big, long count);
