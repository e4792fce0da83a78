using System.Net;
using Microsoft.Azure.Cosmos;

namespace EmbeddedCosmos.Tests;

public record Note(string id, string pk, int n, string? text = null);

[Collection("server")]
public class CrudTests(EmbeddedServer server)
{
    private Task<Container> NewContainer(string name) => server.Container("crud", name);

    [Fact]
    public async Task CreatesReadsReplacesAndDeletesWithETagsAndSessionTokens()
    {
        var container = await NewContainer("notes");
        var created = await container.CreateItemAsync(new Note("a", "p1", 1), new PartitionKey("p1"));
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        Assert.False(string.IsNullOrEmpty(created.ETag));
        Assert.Matches(@"^\d+:-1#\d+$", created.Headers.Session);

        var read = await container.ReadItemAsync<Note>("a", new PartitionKey("p1"));
        Assert.Equal(1, read.Resource.n);
        Assert.Equal(created.ETag, read.ETag);

        var replaced = await container.ReplaceItemAsync(new Note("a", "p1", 2), "a", new PartitionKey("p1"), new ItemRequestOptions { IfMatchEtag = read.ETag });
        Assert.NotEqual(read.ETag, replaced.ETag);
        var stale = await Assert.ThrowsAsync<CosmosException>(() =>
            container.ReplaceItemAsync(new Note("a", "p1", 3), "a", new PartitionKey("p1"), new ItemRequestOptions { IfMatchEtag = read.ETag }));
        Assert.Equal(HttpStatusCode.PreconditionFailed, stale.StatusCode);

        await container.DeleteItemAsync<Note>("a", new PartitionKey("p1"));
        var gone = await Assert.ThrowsAsync<CosmosException>(() => container.ReadItemAsync<Note>("a", new PartitionKey("p1")));
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
    }

    [Fact]
    public async Task QueriesOnePartitionAndAllOfThemPagedWithContinuations()
    {
        var container = await NewContainer("paged");
        for (var i = 0; i < 40; i++) await container.UpsertItemAsync(new Note($"n{i}", $"p{i % 7}", i), new PartitionKey($"p{i % 7}"));

        var onePartition = await ReadAll(container.GetItemQueryIterator<Note>(
            new QueryDefinition("SELECT * FROM c WHERE c.n >= @min").WithParameter("@min", 10),
            requestOptions: new QueryRequestOptions { PartitionKey = new PartitionKey("p3"), MaxItemCount = 2 }));
        Assert.Equal(Enumerable.Range(10, 30).Where(i => i % 7 == 3).OrderBy(i => i), onePartition.Select(n => n.n).OrderBy(i => i));

        var all = await ReadAll(container.GetItemQueryIterator<Note>("SELECT * FROM c", requestOptions: new QueryRequestOptions { MaxItemCount = 5 }));
        Assert.Equal(40, all.Select(n => n.id).Distinct().Count());
    }

    internal static async Task<List<T>> ReadAll<T>(FeedIterator<T> iterator)
    {
        var items = new List<T>();
        while (iterator.HasMoreResults) items.AddRange(await iterator.ReadNextAsync());
        return items;
    }
}

[Collection("server")]
public class ThroughputTests(EmbeddedServer server)
{
    [Fact]
    public async Task ReadsAndReplacesAContainersThroughputThroughItsOffer()
    {
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("offers")).Database;
        var container = (await db.CreateContainerIfNotExistsAsync(new ContainerProperties("provisioned", "/pk"), throughput: 600)).Container;
        Assert.Equal(600, await container.ReadThroughputAsync());
        await container.ReplaceThroughputAsync(1000);
        Assert.Equal(1000, await container.ReadThroughputAsync());

        var autoscale = (await db.CreateContainerIfNotExistsAsync(new ContainerProperties("autoscaled", "/pk"), ThroughputProperties.CreateAutoscaleThroughput(4000))).Container;
        var read = await autoscale.ReadThroughputAsync(new RequestOptions());
        Assert.Equal(4000, read.Resource.AutoscaleMaxThroughput);
    }
}
