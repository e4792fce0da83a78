import { join } from "node:path";
import { loadFunctionApp, type FunctionApp, type FunctionAppOptions } from "local-host";
import { withAppServices } from "../functions/composition-root";
import type { AppServices } from "../src/app-services";
import { BINDING_SETTING_DEFAULTS } from "../src/config";

/** The app's entry, as package.json's `main` names it in the deployment package (compiled, or its source under a test runner). */
export const APP_ENTRY = join(__dirname, "../functions/index");

/**
 * Loads the app through the worker's API (once per process), with the settings the process has
 * (the bindings' defaults); every invocation through what this returns runs with `services`.
 */
export function loadApp(services: AppServices, options: Partial<FunctionAppOptions> = {}): Promise<FunctionApp> {
  return loadFunctionApp(APP_ENTRY, {
    settings: (name) => process.env[name] ?? BINDING_SETTING_DEFAULTS[name],
    durableClient: () => {
      throw new Error("this host serves no durable client");
    },
    log: () => {},
    invocationScope: (invocation) => withAppServices(services, invocation),
    ...options,
  });
}
