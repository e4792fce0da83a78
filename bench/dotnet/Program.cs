using System.Diagnostics;
using System.Text.Json;
using Microsoft.Azure.Cosmos;

// Usage: PointOperations <endpoint> <key> <seconds> <in flight>
// Prints one JSON line: {"items":..,"readsPerSecond":..,"upsertsPerSecond":..}
if (args.Length != 4) throw new ArgumentException("usage: PointOperations <endpoint> <key> <seconds> <in flight>");
var (endpoint, key, seconds, inFlight) = (args[0], args[1], double.Parse(args[2]), int.Parse(args[3]));
using var client = new CosmosClient(endpoint, key, new CosmosClientOptions { ConnectionMode = ConnectionMode.Gateway, LimitToEndpoint = true });
var db = (await client.CreateDatabaseIfNotExistsAsync("bench-points-dotnet")).Database;
var container = (await db.CreateContainerIfNotExistsAsync(new ContainerProperties("items", "/pk"))).Container;
const int Items = 1000;
for (var i = 0; i < Items; i += 50)
    await Task.WhenAll(Enumerable.Range(i, 50).Select(n => container.UpsertItemAsync(new Item($"i{n}", $"p{n % 97}", n, 0), new PartitionKey($"p{n % 97}"))));

// Each in-flight loop walks the items with its own stride, so the loops touch different partitions.
async Task<double> Rate(Func<int, Task> operation)
{
    long done = 0;
    var clock = Stopwatch.StartNew();
    await Task.WhenAll(Enumerable.Range(0, inFlight).Select(async loop =>
    {
        for (var n = loop; clock.Elapsed.TotalSeconds < seconds; n += inFlight)
        {
            await operation(n % Items);
            Interlocked.Increment(ref done);
        }
    }));
    return done / clock.Elapsed.TotalSeconds;
}

var reads = await Rate(n => container.ReadItemAsync<Item>($"i{n}", new PartitionKey($"p{n % 97}")));
var upserts = await Rate(n => container.UpsertItemAsync(new Item($"i{n}", $"p{n % 97}", n, 1), new PartitionKey($"p{n % 97}")));
Console.WriteLine(JsonSerializer.Serialize(new { items = Items, readsPerSecond = reads, upsertsPerSecond = upserts }));

record Item(string id, string pk, int n, int version);
