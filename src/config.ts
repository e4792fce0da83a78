import * as z from "zod";
import { databaseName } from "../infra/containers.json";

/** Every setting's default, in one place: the environment's schema and hosts that build settings both take them from here. */
export const SETTING_DEFAULTS = {
  databaseName,
  /** How long a soft-deleted post and its comments and likes linger before Cosmos DB expires them (one day). */
  softDeleteTtlSeconds: 86_400,
  /** How long an instance serves Q6 from memory; 0 turns the micro-cache off. */
  feedCacheMs: 1000,
  /** A post's feed copy follows a change that only moved its counts at most this often: the feed's partition must not take a write per like. */
  feedRefreshSeconds: 5,
  /** How long the SDK keeps retrying a throttled (429) request; the caller then gets 429 with Retry-After instead of waiting 30 s. */
  maxRetryWaitSeconds: 10,
  /** Likes and unlikes of one post per stored procedure call at most (1 sends each alone): the group commit. */
  likeBatchMax: 50,
  /** When the backlog timer runs (NCRONTAB, UTC): each minute, the lag alert's grain. */
  backlogSchedule: "0 */1 * * * *",
} as const;

/**
 * The settings the app's bindings name as `%NAME%` (the host resolves them when it indexes the
 * functions, and fails without them), with their defaults: hosts that write or serve app
 * settings (func start's local.settings.json, npm start) take them from here.
 */
export const BINDING_SETTING_DEFAULTS: Readonly<Record<string, string>> = {
  COSMOS_DATABASE: SETTING_DEFAULTS.databaseName,
  BACKLOG_SCHEDULE: SETTING_DEFAULTS.backlogSchedule,
};

/** The settings, resolved: every value present (app settings in Azure, local.settings.json under func, or a host's own). */
export interface Settings {
  cosmos: {
    endpoint: string;
    /** Account key for the emulator or the embedded server; absent in Azure (Entra ID is used). */
    key?: string;
    databaseName: string;
    maxRetryWaitSeconds: number;
  };
  auth: AuthSettings;
  softDeleteTtlSeconds: number;
  feedRefreshSeconds: number;
  feedCacheMs: number;
  likeBatchMax: number;
}

/** What a host gives: the account, and whichever settings it sets differently from the defaults. */
export interface SettingsInput {
  cosmos: { endpoint: string; key?: string; databaseName?: string; maxRetryWaitSeconds?: number };
  auth?: AuthSettings;
  softDeleteTtlSeconds?: number;
  feedRefreshSeconds?: number;
  feedCacheMs?: number;
  likeBatchMax?: number;
}

/** THE resolution of settings: each one given, or its default. Everything else reads the result. */
export function resolveSettings(input: SettingsInput): Settings {
  const d = SETTING_DEFAULTS;
  return {
    cosmos: {
      endpoint: input.cosmos.endpoint,
      key: input.cosmos.key,
      databaseName: input.cosmos.databaseName ?? d.databaseName,
      maxRetryWaitSeconds: input.cosmos.maxRetryWaitSeconds ?? d.maxRetryWaitSeconds,
    },
    auth: input.auth ?? {},
    softDeleteTtlSeconds: input.softDeleteTtlSeconds ?? d.softDeleteTtlSeconds,
    feedRefreshSeconds: input.feedRefreshSeconds ?? d.feedRefreshSeconds,
    feedCacheMs: input.feedCacheMs ?? d.feedCacheMs,
    likeBatchMax: input.likeBatchMax ?? d.likeBatchMax,
  };
}

/**
 * The HS256 secret `npm start` signs dev tokens with when AUTH_DEV_SECRET is not set. It is
 * published with the code, so anyone can sign with it: only the embedded server accepts it,
 * and settings for a real account refuse it.
 */
export const LOCAL_DEV_SECRET = "local-development-only-secret-not-for-azure-0001";

/** Which bearer tokens the API accepts (README, Authentication). */
export interface AuthSettings {
  devSecret?: string;
  /** The OIDC issuer; for Entra ID the v2.0 one, and the tenant's v1 issuer is accepted beside it. */
  issuer?: string;
  /** Accepted audiences, comma-separated in AUTH_AUDIENCE; `api://<client id>` also accepts the bare client ID (v2 tokens). */
  audience?: string;
  jwksUri?: string;
  /** The API's delegated scope a user's token must carry in `scp` (AUTH_SCOPE, e.g. access_as_user). */
  scope?: string;
  /** App roles, any of which in `roles` admits an application's token instead (AUTH_APP_ROLES, comma-separated). */
  appRoles?: string[];
  /** App roles, any of which in `roles` lets a caller erase any account (AUTH_ADMIN_ROLES, comma-separated; none by default). */
  adminRoles?: string[];
}

const optional = z.string().trim().min(1).optional().catch(undefined);

/** Tuning settings every host reads from the environment the same way (app settings in Azure, npm start locally). */
const tuningSchema = z.object({
  FEED_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(SETTING_DEFAULTS.feedCacheMs),
  FEED_REFRESH_SECONDS: z.coerce.number().int().min(0).max(3600).default(SETTING_DEFAULTS.feedRefreshSeconds),
  COSMOS_MAX_RETRY_WAIT_SECONDS: z.coerce.number().int().min(0).max(300).default(SETTING_DEFAULTS.maxRetryWaitSeconds),
  LIKE_BATCH_MAX: z.coerce.number().int().min(1).max(100).default(SETTING_DEFAULTS.likeBatchMax),
  SOFT_DELETE_TTL_SECONDS: z.coerce.number().int().positive().default(SETTING_DEFAULTS.softDeleteTtlSeconds),
  COSMOS_DATABASE: optional,
});

const schema = z
  .object({
    /** A key-based connection string (emulator): the same setting the change feed trigger reads. */
    COSMOS: optional,
    COSMOS_ENDPOINT: optional,
    COSMOS__accountEndpoint: optional,
    COSMOS_KEY: optional,
    /** Read by the host (the backlog timer's binding), never by the app's code. */
    BACKLOG_SCHEDULE: optional,
    AUTH_DEV_SECRET: optional,
    AUTH_ISSUER: optional,
    AUTH_AUDIENCE: optional,
    AUTH_JWKS_URI: optional,
    /** Unset: DEFAULT_AUTH_SCOPE when an issuer is set; set empty: no scope required (as the Bicep parameter). */
    AUTH_SCOPE: z.string().trim().optional(),
    AUTH_APP_ROLES: optional,
    AUTH_ADMIN_ROLES: optional,
  })
  .merge(tuningSchema);

function parse<T extends z.ZodTypeAny>(schemaOf: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schemaOf.safeParse(env);
  if (!parsed.success) throw new Error(`Invalid settings: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/** The settings that do not choose the account: every host reads them, with the embedded server as with an account. */
export type Tuning = Pick<Settings, "feedCacheMs" | "feedRefreshSeconds" | "likeBatchMax" | "softDeleteTtlSeconds"> &
  Pick<Settings["cosmos"], "maxRetryWaitSeconds" | "databaseName">;

/** The tuning settings from their environment names: the one mapping both hosts use. */
const tuningOf = (values: z.infer<typeof tuningSchema>): Tuning => ({
  feedCacheMs: values.FEED_CACHE_MS,
  feedRefreshSeconds: values.FEED_REFRESH_SECONDS,
  maxRetryWaitSeconds: values.COSMOS_MAX_RETRY_WAIT_SECONDS,
  likeBatchMax: values.LIKE_BATCH_MAX,
  softDeleteTtlSeconds: values.SOFT_DELETE_TTL_SECONDS,
  databaseName: values.COSMOS_DATABASE ?? SETTING_DEFAULTS.databaseName,
});

/** The tuning settings alone: for `npm start` with the embedded server, where there is no endpoint to load. */
export function loadTuning(env: NodeJS.ProcessEnv = process.env): Tuning {
  return tuningOf(parse(tuningSchema, env));
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const values = parse(schema, env);
  const connection = parseConnectionString(values.COSMOS);
  const endpoint = values.COSMOS_ENDPOINT ?? values.COSMOS__accountEndpoint ?? connection.AccountEndpoint;
  if (!endpoint) throw new Error("Set COSMOS__accountEndpoint (Entra ID), or COSMOS_ENDPOINT and COSMOS_KEY, or a COSMOS connection string.");
  if (values.AUTH_DEV_SECRET !== undefined && values.AUTH_DEV_SECRET.length < 32) {
    throw new Error("AUTH_DEV_SECRET must be at least 32 characters (HS256 needs a 256-bit secret).");
  }
  if (values.AUTH_DEV_SECRET === LOCAL_DEV_SECRET) {
    throw new Error(
      "AUTH_DEV_SECRET is the local secret published with the code: anyone could sign tokens with it. Set a random secret of your own (at least 32 characters), or none.",
    );
  }
  const { maxRetryWaitSeconds, databaseName, ...tuning } = tuningOf(values);
  return {
    cosmos: { endpoint, key: values.COSMOS_KEY ?? connection.AccountKey, databaseName, maxRetryWaitSeconds },
    auth: { devSecret: values.AUTH_DEV_SECRET, ...issuerOf(values) },
    ...tuning,
  };
}

/** Every app setting the app reads, with whether it may be absent (it has a default or is one of several ways to say a thing). */
export const APP_SETTINGS: readonly { name: string; optional: boolean }[] = Object.entries(schema.shape).map(([name, setting]) => ({
  name,
  optional: setting.isOptional(),
}));

const authSchema = schema.pick({ AUTH_ISSUER: true, AUTH_AUDIENCE: true, AUTH_JWKS_URI: true, AUTH_SCOPE: true, AUTH_APP_ROLES: true, AUTH_ADMIN_ROLES: true });

const roleList = (value: string | undefined) =>
  value
    ?.split(",")
    .map((role) => role.trim())
    .filter(Boolean);

/**
 * The scope a user's token must carry when an issuer is set and AUTH_SCOPE is not: the one the
 * Bicep deployment names, so that no host accepts an ID token (no `scp`) as an access token.
 */
export const DEFAULT_AUTH_SCOPE = "access_as_user";

/** The issuer settings, without the dev secret. */
function issuerOf(values: z.infer<typeof authSchema>): Omit<AuthSettings, "devSecret"> {
  const appRoles = roleList(values.AUTH_APP_ROLES);
  const adminRoles = roleList(values.AUTH_ADMIN_ROLES);
  return {
    issuer: values.AUTH_ISSUER,
    audience: values.AUTH_AUDIENCE,
    jwksUri: values.AUTH_JWKS_URI,
    scope: values.AUTH_SCOPE === undefined ? (values.AUTH_ISSUER ? DEFAULT_AUTH_SCOPE : undefined) : values.AUTH_SCOPE || undefined,
    ...(appRoles?.length ? { appRoles } : {}),
    ...(adminRoles?.length ? { adminRoles } : {}),
  };
}

/** The OIDC issuer settings alone: `npm start` honours them with the embedded server too, beside dev sign-in. */
export function loadIssuerSettings(env: NodeJS.ProcessEnv = process.env): Omit<AuthSettings, "devSecret"> {
  return issuerOf(parse(authSchema, env));
}

/** `AccountEndpoint=...;AccountKey=...;` as the Functions Cosmos DB extension reads it. */
function parseConnectionString(value: string | undefined): Record<string, string> {
  if (!value) return {};
  return Object.fromEntries(
    value
      .split(";")
      .map((part) => part.trim())
      .filter((part) => part.includes("="))
      .map((part) => [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)]),
  );
}
