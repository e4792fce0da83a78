using Microsoft.Azure.Cosmos;

namespace EmbeddedCosmos.Tests;

public record Tenanted(string id, string tenant, string user, int n, int v);

/// <summary>
/// Hierarchical partition keys (tenant / user / n) in every query form the .NET SDK sends: a
/// whole key, a prefix of one or two components built with PartitionKeyBuilder (every logical
/// partition under it, across the server's 4 physical partitions), and no key at all (the SDK's
/// cross-partition pipeline).
/// </summary>
[Collection("server")]
public class HierarchicalKeyTests(EmbeddedServer server)
{
    private static readonly Tenanted[] Items = Enumerable.Range(0, 40).Select(v => new Tenanted($"i{v}", $"t{v % 3}", $"u{v % 5}", v % 2, v)).ToArray();

    private async Task<Container> Tenants()
    {
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("hierarchical")).Database;
        var properties = new ContainerProperties("tenants", new List<string> { "/tenant", "/user", "/n" });
        var response = await db.CreateContainerIfNotExistsAsync(properties);
        if (response.StatusCode == System.Net.HttpStatusCode.Created)
            foreach (var item in Items) await response.Container.CreateItemAsync(item, new PartitionKeyBuilder().Add(item.tenant).Add(item.user).Add(item.n).Build());
        return response.Container;
    }

    private static async Task<List<int>> Values(Container container, string sql, PartitionKey? key = null) =>
        await CrudTests.ReadAll(container.GetItemQueryIterator<int>(sql, requestOptions: new QueryRequestOptions { PartitionKey = key }));

    private static List<int> Expected(Func<Tenanted, bool> keep) => Items.Where(keep).Select(i => i.v).ToList();

    [Fact]
    public async Task AWholeKeyIsOneLogicalPartition()
    {
        var container = await Tenants();
        var key = new PartitionKeyBuilder().Add("t0").Add("u0").Add(0).Build();
        Assert.Equal(Expected(i => i is { tenant: "t0", user: "u0", n: 0 }), await Values(container, "SELECT VALUE c.v FROM c ORDER BY c.v", key));
        Assert.Equal(0, (await container.ReadItemAsync<Tenanted>("i0", key)).Resource.v);
    }

    [Fact]
    public async Task APrefixCoversEveryLogicalPartitionUnderIt()
    {
        var container = await Tenants();
        var t0 = new PartitionKeyBuilder().Add("t0").Build();
        Assert.Equal(Expected(i => i.tenant == "t0"), await Values(container, "SELECT VALUE c.v FROM c ORDER BY c.v", t0));
        Assert.Equal(Expected(i => i is { tenant: "t1", user: "u1" }), await Values(container, "SELECT VALUE c.v FROM c ORDER BY c.v", new PartitionKeyBuilder().Add("t1").Add("u1").Build()));
        Assert.Equal(new List<int> { Expected(i => i.tenant == "t0").Count }, await Values(container, "SELECT VALUE COUNT(1) FROM c", t0));
        Assert.Equal(Expected(i => i.tenant == "t0").TakeLast(3).Reverse().ToList(), await Values(container, "SELECT TOP 3 VALUE c.v FROM c ORDER BY c.v DESC", t0));
    }

    [Fact]
    public async Task NoKeyRunsTheCrossPartitionPipeline()
    {
        var container = await Tenants();
        Assert.Equal(Expected(i => i is { tenant: "t2", user: "u1" }), await Values(container, "SELECT VALUE c.v FROM c WHERE c.tenant = 't2' AND c.user = 'u1' ORDER BY c.v"));
    }
}
