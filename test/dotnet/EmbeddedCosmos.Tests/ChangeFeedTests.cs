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
        {
            var iterator = monitored.GetChangeFeedIterator<Note>(ChangeFeedStartFrom.ContinuationToken(continuation), ChangeFeedMode.LatestVersion);
            while (iterator.HasMoreResults)
            {
                var page = await iterator.ReadNextAsync();
                if (page.StatusCode == System.Net.HttpStatusCode.NotModified) break;
                after.AddRange(page.Select(n => n.id));
            }
        }
        Assert.Equal(Enumerable.Range(0, 12).Select(i => $"b{i}").OrderBy(x => x), after.OrderBy(x => x));
    }

    [Fact]
    public async Task TheChangeFeedProcessorDeliversEveryChangeAndTheEstimatorSeesTheBacklog()
    {
        var (monitored, leases) = await NewContainers("processed");
        var delivered = new ConcurrentBag<string>();
        var processor = monitored
            .GetChangeFeedProcessorBuilder<Note>("notesChangeFeed", (changes, _) =>
            {
                foreach (var note in changes) delivered.Add(note.id);
                return Task.CompletedTask;
            })
            .WithInstanceName("host-a")
            .WithLeaseContainer(leases)
            .WithStartTime(DateTime.MinValue.ToUniversalTime())
            .WithPollInterval(TimeSpan.FromMilliseconds(100))
            .Build();
        await Write(monitored, "n", 20);
        await processor.StartAsync();
        try
        {
            await Eventually(() => delivered.Distinct().Count() == 20);
        }
        finally
        {
            await processor.StopAsync();
        }

        // Stopped: what is written now waits, and the estimator counts it.
        await Write(monitored, "late", 12);
        var estimator = monitored.GetChangeFeedEstimator("notesChangeFeed", leases);
        long pending = 0;
        var iterator = estimator.GetCurrentStateIterator();
        while (iterator.HasMoreResults) pending += (await iterator.ReadNextAsync()).Sum(lease => lease.EstimatedLag);
        Assert.Equal(12, pending);
    }

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
