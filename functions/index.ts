// The app as the Functions host loads it (package.json "main" of the deployment package): every
// registration, so one bundle holds one copy of @azure/functions and durable-functions.
import "./telemetry";
import "./http";
import "./change-feeds";
import "./durable";
import "./backlog-timer";
