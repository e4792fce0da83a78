using Microsoft.Azure.Cosmos;
using Microsoft.Azure.Cosmos.Scripts;

namespace EmbeddedCosmos.Tests;

/// <summary>Patch and stored procedures as the .NET SDK sends them (its transactional batches and bulk, in the HybridRow format, are not served yet).</summary>
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
}
