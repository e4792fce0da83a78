using System.Collections.ObjectModel;
using Microsoft.Azure.Cosmos;

namespace EmbeddedCosmos.Tests;

public record Article(string id, string blog, string title, string body);

/// <summary>
/// Full-text search as the .NET SDK runs it: the container's full-text policy and indexes, the
/// four functions, and ORDER BY RANK across the server's 4 physical partitions through the SDK's
/// own hybrid search pipeline (the gateway's plan, its statistics query, its component queries),
/// beside the same query answered by the server alone in one logical partition.
/// </summary>
[Collection("server")]
public class FullTextTests(EmbeddedServer server)
{
    private static readonly Article[] Corpus =
    [
        new("a1", "b", "Partitioning in Azure Cosmos DB", "Choose a partition key that spreads writes. Partition keys decide where items live."),
        new("a2", "b", "Modeling data", "Embed or reference: modeling data for a read-heavy workload."),
        new("a3", "b", "The change feed", "The change feed lists changes in order, partition by partition."),
        new("a4", "b", "Cats", "The cat sat on the mat. Cats like mats."),
        new("a5", "b", "Request units", "Every request costs request units; a point read costs one."),
        new("a6", "b", "Hot partitions", "A hot partition throttles: spread the partition key, or the partition's budget runs out."),
    ];

    /// <summary>The articles in a container keyed by `pk` (each article its own partition, or all in one).</summary>
    private async Task<Container> ArticlesIn(string id, string partitionKeyPath)
    {
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("fulltext")).Database;
        var properties = new ContainerProperties(id, partitionKeyPath)
        {
            FullTextPolicy = new FullTextPolicy
            {
                DefaultLanguage = "en-US",
                FullTextPaths = new Collection<FullTextPath> { new() { Path = "/title", Language = "en-US" }, new() { Path = "/body", Language = "en-US" } },
            },
        };
        properties.IndexingPolicy.FullTextIndexes.Add(new FullTextIndexPath { Path = "/title" });
        properties.IndexingPolicy.FullTextIndexes.Add(new FullTextIndexPath { Path = "/body" });
        var response = await db.CreateContainerIfNotExistsAsync(properties);
        if (response.StatusCode == System.Net.HttpStatusCode.Created)
            foreach (var article in Corpus) await response.Container.CreateItemAsync(article);
        return response.Container;
    }

    private static async Task<List<string>> Ids(Container container, string sql, string? partitionKey = null) =>
        (await CrudTests.ReadAll(container.GetItemQueryIterator<Article>(sql, requestOptions: new QueryRequestOptions { PartitionKey = partitionKey is null ? null : new PartitionKey(partitionKey) })))
            .Select(a => a.id).ToList();

    [Fact]
    public async Task TheContainerKeepsItsFullTextPolicyAndIndexes()
    {
        var read = (await (await ArticlesIn("spread", "/id")).ReadContainerAsync()).Resource;
        Assert.Equal("en-US", read.FullTextPolicy.DefaultLanguage);
        Assert.Equal(new[] { "/title", "/body" }, read.FullTextPolicy.FullTextPaths.Select(p => p.Path));
        Assert.Equal(new[] { "/title", "/body" }, read.IndexingPolicy.FullTextIndexes.Select(p => p.Path));
    }

    [Fact]
    public async Task TheFourFunctionsFindWordsByTheirStemsAcrossPartitions()
    {
        var spread = await ArticlesIn("spread", "/id");
        Assert.Equal(new[] { "a1", "a3", "a6" }, (await Ids(spread, "SELECT * FROM c WHERE FullTextContains(c.body, 'partitions')")).Order());
        Assert.Equal(new[] { "a1", "a6" }, (await Ids(spread, "SELECT * FROM c WHERE FullTextContainsAll(c.body, 'partition', 'spreading')")).Order());
        Assert.Equal(new[] { "a4", "a5" }, (await Ids(spread, "SELECT * FROM c WHERE FullTextContainsAny(c.body, 'cat', 'requests')")).Order());
    }

    [Fact]
    public async Task RankedQueriesOrderTheSameThroughTheSdksPipelineAsInOnePartition()
    {
        var spread = await ArticlesIn("spread", "/id");
        var together = await ArticlesIn("together", "/blog");
        foreach (var sql in new[]
        {
            "SELECT TOP 3 * FROM c ORDER BY RANK FullTextScore(c.body, 'partition')",
            "SELECT * FROM c ORDER BY RANK FullTextScore(c.body, 'partition', 'key') OFFSET 1 LIMIT 2",
            "SELECT TOP 2 * FROM c ORDER BY RANK RRF(FullTextScore(c.title, 'partitions'), FullTextScore(c.body, 'spread'), [1, 3])",
        })
        {
            var direct = await Ids(together, sql, "b");
            Assert.NotEmpty(direct);
            Assert.Equal(direct, await Ids(spread, sql));
        }
        // BM25: the text saying it most, for its length, first.
        Assert.Equal(new[] { "a6", "a3", "a1" }, await Ids(spread, "SELECT TOP 3 * FROM c ORDER BY RANK FullTextScore(c.body, 'partition')"));
    }
}
