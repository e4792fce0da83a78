// The linter: typescript-eslint's recommended rules and the layering of CONTRIBUTING.md as rules
// (import circles are dependency-cruiser's, .dependency-cruiser.cjs). Formatting is Prettier's
// (eslint-config-prettier turns off the rules that would argue with it).
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

/** Everything above a layer in the architecture's arrows: no layer imports from one above it. */
const OUTSIDE_SRC = ["local", "functions", "lazy", "scripts", "chaos", "bench", "test", "web"];
/** The app never imports the local runtime: the deployable bundle must not pull it in. */
const LOCAL_RUNTIME = ["embedded-cosmos", "local-host"];

/** The local runtime's packages (packages/*, npm workspaces) are reached through their entries only. */
const THROUGH_ENTRIES = [
  { regex: "^embedded-cosmos/", message: 'Use the embedded server through its entry (import from "embedded-cosmos"), never its files.' },
  { regex: "^local-host/", message: 'Use the local host through its entry (import from "local-host"), never its files.' },
  {
    regex: "^(\\.\\./)+packages/[^/]+/(src|dist)(/|$)",
    message: "A package of the local runtime is used through its entry (its package name), never its files.",
  },
];

/** One folder's rule: the folders (top-level, or inside src/) it may not import from, and the packages. */
function layer(files, { folders = [], srcFolders = [], packages = [], outside, why }) {
  const patterns = [...THROUGH_ENTRIES];
  if (outside) patterns.push({ regex: outside, message: why });
  if (folders.length) patterns.push({ regex: `^(\\.\\./)+(${folders.join("|")})(/|$)`, message: why });
  if (srcFolders.length) patterns.push({ regex: `^(\\.\\./)+(src/)?(${srcFolders.join("|")})(/|$)`, message: why });
  return {
    files,
    rules: {
      "no-restricted-imports": ["error", { paths: packages.map((name) => ({ name, message: why })), patterns }],
    },
  };
}

const COSMOS_ONLY_IN_STORE = "Only src/store/ talks to Cosmos DB (@azure/cosmos); the layers above call its functions.";

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "node_modules/",
      ".data/",
      "infra/compiled/",
      "web/config.json",
      "sprocs/",
      "packages/*/dist/",
      "packages/embedded-cosmos/src/scripts/sandbox-runtime.js",
      "packages/embedded-cosmos/src/query/udf-runtime.js",
      "**/*.generated.js",
      "**/*.d.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        fetch: "readonly",
        AbortSignal: "readonly",
      },
    },
    rules: {
      // An orchestrator may finish without yielding: it is still a generator to the replay engine.
      "require-yield": "off",
      // A closure may read a variable assigned once the host listens (system.ts): it checks for undefined.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  // src/: request -> api -> store -> Cosmos DB; change feed -> pipeline -> store. model is pure.
  layer(["src/model/**"], {
    srcFolders: ["store", "api", "pipeline", "config"],
    folders: OUTSIDE_SRC,
    packages: [...LOCAL_RUNTIME, "@azure/cosmos", "@azure/functions", "durable-functions"],
    why: "src/model/ is pure: item shapes, limits, short form; no I/O and nothing above it.",
  }),
  layer(["src/telemetry/**"], {
    srcFolders: ["store", "api", "pipeline", "model", "config"],
    folders: OUTSIDE_SRC,
    packages: [...LOCAL_RUNTIME, "@azure/cosmos", "@opentelemetry/sdk-trace-node", "@opentelemetry/sdk-metrics", "@azure/monitor-opentelemetry"],
    why: "src/telemetry/ is below every layer and knows only the OpenTelemetry API; each host picks the SDK and exporters.",
  }),
  layer(["src/store/**"], {
    srcFolders: ["api", "pipeline"],
    folders: OUTSIDE_SRC,
    packages: LOCAL_RUNTIME,
    why: "src/store/ is below api/ and pipeline/: it may use model/ and config only.",
  }),
  layer(["src/pipeline/**"], {
    srcFolders: ["api"],
    folders: OUTSIDE_SRC,
    packages: [...LOCAL_RUNTIME, "@azure/cosmos"],
    why: `src/pipeline/ uses store/ and model/, not api/. ${COSMOS_ONLY_IN_STORE}`,
  }),
  layer(["src/api/**"], {
    srcFolders: ["pipeline"],
    folders: OUTSIDE_SRC,
    packages: [...LOCAL_RUNTIME, "@azure/cosmos"],
    why: `src/api/ uses store/ and model/, not pipeline/. ${COSMOS_ONLY_IN_STORE}`,
  }),
  layer(["src/*.ts"], {
    folders: OUTSIDE_SRC,
    packages: [...LOCAL_RUNTIME, "@azure/cosmos"],
    why: "src/ is the app: it imports nothing of the hosts, tools or tests.",
  }),
  // The hosts run src/; the embedded server stands alone (it knows nothing of the app).
  layer(["functions/**"], {
    folders: ["local", "scripts", "chaos", "bench", "test", "web"],
    packages: LOCAL_RUNTIME,
    why: "functions/ registers src/'s handlers with the Functions host, nothing else.",
  }),
  // A package's source imports nothing outside its src/ (a room climbs one level to reach another, the entry none).
  ...[
    ["packages/embedded-cosmos/src/*/**", "^(\\.\\./){2,}"],
    ["packages/embedded-cosmos/src/*.ts", "^\\.\\./"],
  ].map(([files, outside]) =>
    layer([files], {
      outside,
      packages: ["@azure/cosmos", "@azure/functions", "durable-functions"],
      why: "The embedded Cosmos DB server is a package of its own, a model of Azure: it knows nothing of the app, its hosts or its clients.",
    }),
  ),
  // Tests may start a package through its entry or its own test fixture, never reach into its source.
  layer(["test/**"], { why: "Tests of the app use the local runtime's packages through their entries." }),
  ...[
    ["packages/local-host/src/*/**", "^(\\.\\./){2,}"],
    ["packages/local-host/src/*.ts", "^\\.\\./"],
  ].map(([files, outside]) =>
    layer([files], {
      outside,
      why: "The local host is a package of its own: it serves any Node.js v4 programming-model app and knows nothing of this one.",
    }),
  ),
  layer(["lazy/**"], {
    folders: ["src", "functions", "local", "scripts", "chaos", "bench", "test", "web"],
    why: "lazy/ stands in for packages other packages import: it knows nothing of the app.",
  }),
  layer(["local/*.ts"], {
    folders: ["scripts", "chaos", "bench", "test", "web"],
    why: "local/ runs the app on the local runtime (npm start), handing functions/' composition root its services: it does not reach into the tools or tests above it.",
  }),
  layer(["scripts/**"], { folders: ["chaos", "bench", "test"], why: "scripts/ may use src/ and local/, not chaos/, bench/ or the tests." }),
  layer(["chaos/**", "bench/**"], { folders: ["test"], why: "Tests use the tools, not the other way round." }),
  layer(["web/**"], {
    folders: ["local", "functions", "scripts", "chaos", "bench", "test"],
    srcFolders: ["store", "pipeline", "model", "config"],
    why: "The front end shares only the API's response types with the backend.",
  }),
  {
    files: ["web/src/**"],
    languageOptions: {
      globals: {
        window: "readonly",
        document: "readonly",
        fetch: "readonly",
        location: "readonly",
        history: "readonly",
        localStorage: "readonly",
        sessionStorage: "readonly",
        HTMLElement: "readonly",
        crypto: "readonly",
      },
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable", __dirname: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  // Other packages' private files only through one adapter module each, whose contract a test pins.
  {
    files: ["**/*.ts"],
    ignores: [
      "packages/local-host/src/durable/durable-functions-internals.ts",
      "src/telemetry/opentelemetry-core.ts",
      "**/*.d.ts",
      "test/**",
      "packages/*/test/**",
    ],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["durable-functions/lib/*", "@opentelemetry/*/build/*"],
              message:
                "A package's private files are reached through its one adapter module (durable-functions-internals.ts, opentelemetry-core.ts), whose contract a test pins.",
            },
          ],
        },
      ],
    },
  },
  prettier,
);
