// durable-functions' HTTP client as the bundle gives it (scripts/bundle.ts points the package's
// `axios` here): axios itself, with form-data, mime types, proxy and redirect support and Node's
// http, https, http2 and zlib, is bundled apart (dist/deploy/axios.js) and loaded when the app
// first makes a durable client, not with the app. durable-functions calls axios only through
// `axios.create`, in its DurableClient's constructor, and a cold start that serves a read never
// makes one; loading axios was a sixth of every cold start.
import type { CreateAxiosDefaults } from "axios";

export default {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  create: (config?: CreateAxiosDefaults) => (require("./axios") as typeof import("./axios")).default.create(config),
};
