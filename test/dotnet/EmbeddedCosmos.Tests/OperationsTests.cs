using Microsoft.Azure.Cosmos;
using Microsoft.Azure.Cosmos.Scripts;

namespace EmbeddedCosmos.Tests;

/// <summary>Patch, stored procedures, transactional batches and bulk as the .NET SDK sends them (batches and bulk in its binary HybridRow format).</summary>
[Collection("server")]
public class OperationsTests(EmbeddedServer server)
{
    private Task<Container> NewContainer(string name) => server.Container("operations", name);

    [Fact]
    public async Task PatchesAnItem()
    {
        var container = await NewContainer("patched");
        await container.CreateItemAsync(new Note("a", "p", 1, "x"), new PartitionKey("p"));
        var patched = await container.PatchItemAsync<Note>("a", new PartitionKey("p"), new[] { PatchOperation.Increment("/n", 5), PatchOperation.Set("/text", "y") });
        Assert.Equal(6, patched.Resource.n);
        Assert.Equal("y", patched.Resource.text);
    }

    [Fact]
    public async Task RunsAStoredProcedureInItsPartition()
    {
        var container = await NewContainer("scripted");
        await container.Scripts.CreateStoredProcedureAsync(new StoredProcedureProperties("count",
            "function count(prefix) { var c = getContext().getCollection(); c.queryDocuments(c.getSelfLink(), { query: 'SELECT VALUE COUNT(1) FROM c WHERE STARTSWITH(c.id, @p)', parameters: [{ name: '@p', value: prefix }] }, function (e, r) { if (e) throw e; getContext().getResponse().setBody(r[0]); }); }"));
        for (var i = 0; i < 5; i++) await container.CreateItemAsync(new Note($"s{i}", "p", i), new PartitionKey("p"));
        var result = await container.Scripts.ExecuteStoredProcedureAsync<int>("count", new PartitionKey("p"), new dynamic[] { "s" });
        Assert.Equal(5, result.Resource);
    }

    [Fact]
    public async Task ATransactionalBatchCommitsEveryOperationTogether()
    {
        var container = await NewContainer("batched");
        await container.CreateItemAsync(new Note("kept", "p", 1, "x"), new PartitionKey("p"));
        await container.CreateItemAsync(new Note("gone", "p", 2), new PartitionKey("p"));
        var etag = (await container.ReadItemAsync<Note>("kept", new PartitionKey("p"))).ETag;
        using var response = await container.CreateTransactionalBatch(new PartitionKey("p"))
            .CreateItem(new Note("new", "p", 3))
            .UpsertItem(new Note("upserted", "p", 4))
            .ReplaceItem("kept", new Note("kept", "p", 5, "y"), new TransactionalBatchItemRequestOptions { IfMatchEtag = etag })
            .ReadItem("kept")
            .PatchItem("new", new[] { PatchOperation.Increment("/n", 10) })
            .DeleteItem("gone")
            .ExecuteAsync();
        Assert.True(response.IsSuccessStatusCode, $"{response.StatusCode}: {response.ErrorMessage}");
        Assert.Equal(6, response.Count);
        Assert.Equal(new[] { 201, 201, 200, 200, 200, 204 }, response.Select(r => (int)r.StatusCode));
        Assert.Equal(5, response.GetOperationResultAtIndex<Note>(3).Resource.n);
        Assert.False(string.IsNullOrEmpty(response[2].ETag));
        Assert.True(response.RequestCharge > 0);
        Assert.Equal(13, (await container.ReadItemAsync<Note>("new", new PartitionKey("p"))).Resource.n);
        var missing = await Assert.ThrowsAsync<CosmosException>(() => container.ReadItemAsync<Note>("gone", new PartitionKey("p")));
        Assert.Equal(System.Net.HttpStatusCode.NotFound, missing.StatusCode);
    }

    [Fact]
    public async Task AFailingOperationRollsTheWholeBatchBack()
    {
        var container = await NewContainer("rolled-back");
        await container.CreateItemAsync(new Note("taken", "p", 1), new PartitionKey("p"));
        using var response = await container.CreateTransactionalBatch(new PartitionKey("p"))
            .CreateItem(new Note("first", "p", 2))
            .CreateItem(new Note("taken", "p", 3))
            .UpsertItem(new Note("third", "p", 4))
            .ExecuteAsync();
        Assert.False(response.IsSuccessStatusCode);
        Assert.Equal(System.Net.HttpStatusCode.Conflict, response.StatusCode);
        Assert.Equal(new[] { 424, 409, 424 }, response.Select(r => (int)r.StatusCode));
        var first = await Assert.ThrowsAsync<CosmosException>(() => container.ReadItemAsync<Note>("first", new PartitionKey("p")));
        Assert.Equal(System.Net.HttpStatusCode.NotFound, first.StatusCode);
        Assert.Equal(1, (await container.ReadItemAsync<Note>("taken", new PartitionKey("p"))).Resource.n);
    }

    [Fact]
    public async Task BulkWritesAThousandItemsAcrossPartitionsAndReportsEachOne()
    {
        using var client = new CosmosClient(server.Endpoint, server.Key, new CosmosClientOptions { ConnectionMode = ConnectionMode.Gateway, LimitToEndpoint = true, AllowBulkExecution = true });
        var db = (await client.CreateDatabaseIfNotExistsAsync("operations")).Database;
        var container = (await db.CreateContainerIfNotExistsAsync(new ContainerProperties("bulk", "/pk"))).Container;
        var notes = Enumerable.Range(0, 1000).Select(i => new Note($"b{i}", $"p{i % 37}", i)).ToList();
        var responses = await Task.WhenAll(notes.Select(n => container.CreateItemAsync(n, new PartitionKey(n.pk))));
        Assert.All(responses, r => Assert.Equal(System.Net.HttpStatusCode.Created, r.StatusCode));
        var again = await Task.WhenAll(notes.Take(10).Select(n => Capture(() => container.CreateItemAsync(n, new PartitionKey(n.pk)))));
        Assert.All(again, status => Assert.Equal(System.Net.HttpStatusCode.Conflict, status));
        var count = await container.GetItemQueryIterator<int>("SELECT VALUE COUNT(1) FROM c").ReadNextAsync();
        Assert.Equal(1000, count.Sum());
        var sum = notes.Sum(n => n.n);
        var read = await Task.WhenAll(notes.Select(n => container.ReadItemAsync<Note>(n.id, new PartitionKey(n.pk))));
        Assert.Equal(sum, read.Sum(r => r.Resource.n));
    }

    private static async Task<System.Net.HttpStatusCode> Capture(Func<Task> write)
    {
        try
        {
            await write();
            return System.Net.HttpStatusCode.OK;
        }
        catch (CosmosException e)
        {
            return e.StatusCode;
        }
    }
}
