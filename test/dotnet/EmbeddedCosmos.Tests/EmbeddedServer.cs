using System.Diagnostics;
using System.Text.RegularExpressions;
using Microsoft.Azure.Cosmos;

namespace EmbeddedCosmos.Tests;

/// <summary>
/// The embedded server in a process of its own (the package's command, built by `tsc -b`), and
/// a .NET SDK client for it as a user would make one: Gateway mode, the key the server prints.
/// </summary>
public class EmbeddedServer : IAsyncLifetime
{
    /// <summary>More of the command's options (a throughput budget, say).</summary>
    protected virtual string ExtraArguments => "";

    private Process? process;
    public string Endpoint { get; private set; } = "";
    public string Key { get; private set; } = "";
    public CosmosClient Client { get; private set; } = null!;

    /// <summary>The repository root: the folder above test/dotnet.</summary>
    internal static string Root()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir != null && !File.Exists(Path.Combine(dir.FullName, "package.json"))) dir = dir.Parent;
        return dir?.FullName ?? throw new InvalidOperationException("no package.json above " + AppContext.BaseDirectory);
    }

    public async Task InitializeAsync()
    {
        // EMBEDDED_COSMOS_CLI runs another build of the server (an older one, to see a test fail on it).
        var cli = Environment.GetEnvironmentVariable("EMBEDDED_COSMOS_CLI") ?? Path.Combine(Root(), "packages", "embedded-cosmos", "dist", "cli.js");
        if (!File.Exists(cli)) throw new InvalidOperationException($"{cli} is missing: run `npx tsc -b` first");
        var start = new ProcessStartInfo("node", $"\"{cli}\" --port 0 --partitions 4 {ExtraArguments}") { RedirectStandardOutput = true, RedirectStandardError = true };
        process = Process.Start(start)!;
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (Key == "")
        {
            if (DateTime.UtcNow > deadline) throw new TimeoutException("the embedded server did not start");
            var line = await process.StandardOutput.ReadLineAsync() ?? throw new InvalidOperationException("the embedded server exited: " + await process.StandardError.ReadToEndAsync());
            var endpoint = Regex.Match(line, @"COSMOS_ENDPOINT=(\S+)");
            if (endpoint.Success) Endpoint = endpoint.Groups[1].Value;
            var key = Regex.Match(line, @"COSMOS_KEY=(\S+)");
            if (key.Success) Key = key.Groups[1].Value;
        }
        _ = process.StandardOutput.ReadToEndAsync();
        _ = process.StandardError.ReadToEndAsync();
        Client = NewClient();
    }

    /// <summary>A container partitioned by /pk in `database`, created if it is not there.</summary>
    public async Task<Container> Container(string database, string name)
    {
        var db = (await Client.CreateDatabaseIfNotExistsAsync(database)).Database;
        return (await db.CreateContainerIfNotExistsAsync(new ContainerProperties(name, "/pk"))).Container;
    }

    /// <summary>Every change a change feed iterator has now: its pages until the 304 that says there is no more.</summary>
    public static async Task<List<string>> Drain(FeedIterator<Note> iterator)
    {
        var ids = new List<string>();
        while (iterator.HasMoreResults)
        {
            var page = await iterator.ReadNextAsync();
            if (page.StatusCode == System.Net.HttpStatusCode.NotModified) break;
            ids.AddRange(page.Select(n => n.id));
        }
        return ids;
    }

    public CosmosClient NewClient(ConsistencyLevel? consistency = null) =>
        new(Endpoint, Key, new CosmosClientOptions
        {
            ConnectionMode = ConnectionMode.Gateway,
            LimitToEndpoint = true,
            ConsistencyLevel = consistency,
            RequestTimeout = TimeSpan.FromSeconds(20),
        });

    public Task DisposeAsync()
    {
        Client?.Dispose();
        if (process is { HasExited: false }) process.Kill(entireProcessTree: true);
        return Task.CompletedTask;
    }
}

/// <summary>A server whose physical partitions take 20 item operations a second each, then answer 429 with a retry-after, as one out of request units does.</summary>
public sealed class ThrottledServer : EmbeddedServer
{
    protected override string ExtraArguments => "--operations-per-second 20";
}

[CollectionDefinition("server")]
public class ServerCollection : ICollectionFixture<EmbeddedServer> { }
