using Microsoft.Azure.Cosmos;
using Microsoft.Azure.Cosmos.Scripts;

namespace EmbeddedCosmos.Tests;

public record Numbered(string id, string pk, int n);

/// <summary>
/// User-defined functions as the .NET SDK manages and calls them: created through its scripts
/// API, then called in queries in one partition and across the server's 4 physical partitions,
/// where the SDK runs the gateway's plan (ORDER BY merged by the SDK) with the calls left to the
/// server.
/// </summary>
[Collection("server")]
public class UserDefinedFunctionTests(EmbeddedServer server)
{
    private async Task<Container> NumbersWithFunctions()
    {
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("udfs")).Database;
        var response = await db.CreateContainerIfNotExistsAsync(new ContainerProperties("numbers", "/pk"));
        if (response.StatusCode == System.Net.HttpStatusCode.Created)
        {
            for (var n = 0; n < 12; n++) await response.Container.CreateItemAsync(new Numbered($"i{n}", $"p{n % 5}", n));
            await response.Container.Scripts.CreateUserDefinedFunctionAsync(new UserDefinedFunctionProperties { Id = "double", Body = "function (x) { return 2 * x; }" });
            await response.Container.Scripts.CreateUserDefinedFunctionAsync(new UserDefinedFunctionProperties { Id = "isEven", Body = "function (x) { return x % 2 === 0; }" });
        }
        return response.Container;
    }

    private static async Task<List<int>> Values(Container container, string sql, string? partitionKey = null) =>
        await CrudTests.ReadAll(container.GetItemQueryIterator<int>(sql, requestOptions: new QueryRequestOptions { PartitionKey = partitionKey is null ? null : new PartitionKey(partitionKey) }));

    [Fact]
    public async Task TheSdkReadsBackWhatItCreated()
    {
        var container = await NumbersWithFunctions();
        var read = (await container.Scripts.ReadUserDefinedFunctionAsync("double")).Resource;
        Assert.Equal("function (x) { return 2 * x; }", read.Body);
    }

    [Fact]
    public async Task QueriesCallThemInOnePartitionAndAcrossAll()
    {
        var container = await NumbersWithFunctions();
        Assert.Equal(new[] { 2, 12, 22 }, await Values(container, "SELECT VALUE udf.double(c.n) FROM c ORDER BY c.n", "p1"));
        Assert.Equal(new[] { 20, 16, 12, 8 }, await Values(container, "SELECT VALUE udf.double(c.n) FROM c WHERE udf.isEven(c.n) AND c.n > 3 ORDER BY c.n DESC"));
    }

    [Fact]
    public async Task AnUnknownFunctionIsABadRequest()
    {
        var container = await NumbersWithFunctions();
        var error = await Assert.ThrowsAsync<CosmosException>(() => Values(container, "SELECT VALUE udf.missing(c.n) FROM c", "p0"));
        Assert.Equal(System.Net.HttpStatusCode.BadRequest, error.StatusCode);
    }
}
