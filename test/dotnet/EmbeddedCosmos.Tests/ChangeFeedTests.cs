using System.Collections.Concurrent;
using Microsoft.Azure.Cosmos;

namespace EmbeddedCosmos.Tests;

/// <summary>
/// The change feed as the Functions Cosmos DB trigger reads it: the .NET SDK's pull model and its
/// Change Feed Processor (leases in a container of their own, shared by instances), and the
/// estimator the Functions scale controller scales on.
/// </summary>
[Collection("server")]
public class ChangeFeedTests(EmbeddedServer server)
{
    private async Task<(Container monitored, Container leases)> NewContainers(string name)
    {
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("feeds")).Database;
        var monitored = (await db.CreateContainerIfNotExistsAsync(new ContainerProperties(name, "/pk"))).Container;
        var leases = (await db.CreateContainerIfNotExistsAsync(new ContainerProperties($"{name}-leases", "/id"))).Container;
        return (monitored, leases);
    }

    private static async Task Write(Container container, string prefix, int count)
    {
        for (var i = 0; i < count; i++) await container.UpsertItemAsync(new Note($"{prefix}{i}", $"p{i % 11}", i), new PartitionKey($"p{i % 11}"));
    }

    [Fact]
    public async Task PullsEveryRangeFromTheBeginningAndResumesWithoutGapsOrDuplicates()
    {
        var (monitored, _) = await NewContainers("pulled");
        await Write(monitored, "a", 30);
        var ranges = await monitored.GetFeedRangesAsync();
        Assert.Equal(4, ranges.Count);
        var seen = new List<string>();
        var continuations = new List<string>();
        foreach (var range in ranges)
        {
            var iterator = monitored.GetChangeFeedIterator<Note>(ChangeFeedStartFrom.Beginning(range), ChangeFeedMode.LatestVersion);
            while (iterator.HasMoreResults)
            {
                var page = await iterator.ReadNextAsync();
                if (page.StatusCode == System.Net.HttpStatusCode.NotModified) { continuations.Add(page.ContinuationToken); break; }
                seen.AddRange(page.Select(n => n.id));
            }
        }
        Assert.Equal(30, seen.Count);
        Assert.Equal(30, seen.Distinct().Count());

        await Write(monitored, "b", 12);
        var after = new List<string>();
        foreach (var continuation in continuations)
            after.AddRange(await EmbeddedServer.Drain(monitored.GetChangeFeedIterator<Note>(ChangeFeedStartFrom.ContinuationToken(continuation), ChangeFeedMode.LatestVersion)));
        Assert.Equal(Enumerable.Range(0, 12).Select(i => $"b{i}").OrderBy(x => x), after.OrderBy(x => x));
    }

    [Fact]
    public async Task PullsFromNowAndFromAPointInTime()
    {
        var (monitored, _) = await NewContainers("timed");
        await Write(monitored, "old", 10);
        var now = monitored.GetChangeFeedIterator<Note>(ChangeFeedStartFrom.Now(), ChangeFeedMode.LatestVersion);
        var first = await now.ReadNextAsync();
        Assert.Equal(System.Net.HttpStatusCode.NotModified, first.StatusCode);
        await Task.Delay(1100); // _ts has whole seconds: the point in time is after every old change
        var since = DateTime.UtcNow;
        await Task.Delay(1100);
        await Write(monitored, "new", 5);
        var fromNow = await EmbeddedServer.Drain(now);
        Assert.Equal(Enumerable.Range(0, 5).Select(i => $"new{i}").OrderBy(x => x), fromNow.OrderBy(x => x));
        var fromTime = await EmbeddedServer.Drain(monitored.GetChangeFeedIterator<Note>(ChangeFeedStartFrom.Time(since), ChangeFeedMode.LatestVersion));
        Assert.Equal(Enumerable.Range(0, 5).Select(i => $"new{i}").OrderBy(x => x), fromTime.OrderBy(x => x));
    }

    [Fact]
    public async Task TheChangeFeedProcessorDeliversEveryChangeAndTheEstimatorSeesTheBacklog()
    {
        var (monitored, leases) = await NewContainers("processed");
        var delivered = new ConcurrentBag<string>();
        var processor = Processor(monitored, leases, "notesChangeFeed", "host-a", delivered)
            .WithStartTime(DateTime.MinValue.ToUniversalTime())
            .WithPollInterval(TimeSpan.FromMilliseconds(100))
            .Build();
        await Write(monitored, "n", 20);
        await WhileRunning(processor, () => Eventually(() => delivered.Distinct().Count() == 20));

        // Stopped: what is written now waits, and the estimator counts it.
        await Write(monitored, "late", 12);
        var estimator = monitored.GetChangeFeedEstimator("notesChangeFeed", leases);
        long pending = 0;
        var iterator = estimator.GetCurrentStateIterator();
        while (iterator.HasMoreResults) pending += (await iterator.ReadNextAsync()).Sum(lease => lease.EstimatedLag);
        Assert.Equal(12, pending);

        // Started again, it continues from its checkpoints: the late changes, none of the first again.
        delivered.Clear();
        await WhileRunning(processor, async () =>
        {
            await Eventually(() => delivered.Distinct().Count(id => id.StartsWith("late")) == 12);
            await Task.Delay(300);
            Assert.DoesNotContain(delivered, id => id.StartsWith("n"));
        });
    }

    [Fact]
    public async Task AProcessorAndTheLocalHostsConsumerShareOneLeaseContainerSplittingItsLeases()
    {
        var (monitored, leases) = await NewContainers("shared");
        await Write(monitored, "first", 20);
        // The local host's consumer (Node.js) takes every lease first.
        var local = new List<string>();
        var owned = 0;
        var script = Path.Combine(EmbeddedServer.Root(), "packages", "local-host", "test", "support", "consumer-process.cjs");
        var start = new System.Diagnostics.ProcessStartInfo("node", $"\"{script}\" {server.Endpoint} {server.Key} feeds shared shared-leases posts- local-host") { RedirectStandardOutput = true };
        using var node = System.Diagnostics.Process.Start(start)!;
        node.OutputDataReceived += (_, line) =>
        {
            if (line.Data == null) return;
            lock (local)
            {
                if (line.Data.StartsWith("delivered ")) local.Add(line.Data["delivered ".Length..]);
                if (line.Data.StartsWith("owns ")) owned = int.Parse(line.Data["owns ".Length..]);
            }
        };
        node.BeginOutputReadLine();
        try
        {
            await Eventually(() => { lock (local) return owned == 4 && local.Distinct().Count() == 20; });

            // The .NET processor, named by the same lease prefix as a Functions trigger is, takes its share.
            var dotnet = new ConcurrentBag<string>();
            var processor = Processor(monitored, leases, "posts-", "functions-host", dotnet)
                .WithLeaseConfiguration(acquireInterval: TimeSpan.FromMilliseconds(200), expirationInterval: TimeSpan.FromSeconds(5), renewInterval: TimeSpan.FromSeconds(1))
                .WithPollInterval(TimeSpan.FromMilliseconds(100))
                .Build();
            await processor.StartAsync();
            try
            {
                await Eventually(() => { lock (local) return owned == 2; });
                await Write(monitored, "second", 20);
                var second = Enumerable.Range(0, 20).Select(i => $"second{i}").ToList();
                await Eventually(() => { lock (local) return second.All(id => local.Contains(id) || dotnet.Contains(id)); });
                // Each took part, and the first changes were not read again by the newcomer (it continued from the local checkpoints).
                lock (local) Assert.Contains(local, id => id.StartsWith("second"));
                Assert.Contains(dotnet, id => id.StartsWith("second"));
                Assert.DoesNotContain(dotnet, id => id.StartsWith("first"));
                var owners = await CrudTests.ReadAll(leases.GetItemQueryIterator<string?>("SELECT VALUE c.Owner FROM c WHERE IS_DEFINED(c.LeaseToken)"));
                Assert.Equal(2, owners.Count(o => o == "local-host"));
                Assert.Equal(2, owners.Count(o => o == "functions-host"));
            }
            finally
            {
                await processor.StopAsync();
            }
        }
        finally
        {
            node.Kill(entireProcessTree: true);
        }
    }

    /// <summary>A Change Feed Processor named `name` (the lease prefix), as instance `instance`, putting every id it is handed into `sink`.</summary>
    [Fact]
    public async Task AClientBuiltAsTheFunctionsExtensionBuildsItRunsTheProcessorOverPlainHttp()
    {
        // The Cosmos DB extension makes its client from the connection string `npm run func` writes,
        // in Gateway mode, with its own application name, and nothing else: no LimitToEndpoint, so
        // the SDK follows the account's own list of endpoints.
        using var client = new CosmosClient($"AccountEndpoint={server.Endpoint};AccountKey={server.Key};", new CosmosClientOptions { ConnectionMode = ConnectionMode.Gateway, ApplicationName = "AzureFunctions" });
        Assert.StartsWith("http://", server.Endpoint);
        var (created, _) = await NewContainers("extension");
        var monitored = client.GetContainer(created.Database.Id, created.Id);
        var leases = client.GetContainer(created.Database.Id, $"{created.Id}-leases");
        var delivered = new ConcurrentBag<string>();
        var processor = Processor(monitored, leases, "extension-", "functions-host", delivered).WithStartTime(DateTime.MinValue.ToUniversalTime()).WithPollInterval(TimeSpan.FromMilliseconds(100)).Build();
        await Write(monitored, "x", 15);
        await WhileRunning(processor, () => Eventually(() => delivered.Distinct().Count() == 15));
    }

    /// <summary>Runs `work` while the processor runs; stops it whatever happens.</summary>
    private static async Task WhileRunning(ChangeFeedProcessor processor, Func<Task> work)
    {
        await processor.StartAsync();
        try
        {
            await work();
        }
        finally
        {
            await processor.StopAsync();
        }
    }

    private static ChangeFeedProcessorBuilder Processor(Container monitored, Container leases, string name, string instance, ConcurrentBag<string> sink) =>
        monitored
            .GetChangeFeedProcessorBuilder<Note>(name, (changes, _) =>
            {
                foreach (var note in changes) sink.Add(note.id);
                return Task.CompletedTask;
            })
            .WithInstanceName(instance)
            .WithLeaseContainer(leases);

    internal static async Task Eventually(Func<bool> condition, int seconds = 30)
    {
        var deadline = DateTime.UtcNow.AddSeconds(seconds);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline) throw new TimeoutException("the condition did not hold in time");
            await Task.Delay(50);
        }
    }
}

/// <summary>Throttling as the SDK meets it: 429 with x-ms-retry-after-ms, retried by the SDK itself.</summary>
public class ThrottlingTests(ThrottledServer server) : IClassFixture<ThrottledServer>
{
    [Fact]
    public async Task TheSdkRetriesThrottledWritesUntilEveryOneIsAccepted()
    {
        var db = (await server.Client.CreateDatabaseIfNotExistsAsync("throttled")).Database;
        await db.CreateContainerIfNotExistsAsync(new ContainerProperties("hot", "/pk"));
        // As an app under load configures it: retries enough for the partition's budget to come back (the default gives up after 9).
        using var client = new CosmosClient(server.Endpoint, server.Key, new CosmosClientOptions
        {
            ConnectionMode = ConnectionMode.Gateway,
            LimitToEndpoint = true,
            MaxRetryAttemptsOnRateLimitedRequests = 100,
            MaxRetryWaitTimeOnRateLimitedRequests = TimeSpan.FromSeconds(30),
        });
        var container = client.GetContainer("throttled", "hot");
        var writes = Enumerable.Range(0, 60).Select(i => container.CreateItemAsync(new Note($"t{i}", "one-partition", i), new PartitionKey("one-partition")));
        var responses = await Task.WhenAll(writes);
        Assert.All(responses, r => Assert.Equal(System.Net.HttpStatusCode.Created, r.StatusCode));
        // Some were throttled and retried by the SDK (its diagnostics record each 429 it met).
        Assert.Contains(responses, r => r.Diagnostics.ToString().Contains("429"));
    }
}
