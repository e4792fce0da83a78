import { AsyncLocalStorage } from "node:async_hooks";
import type { AppServices } from "../src/app-services";
import { loadSettings } from "../src/config";
import { createStore, type BlogStore } from "../src/store/client";

/** The services a host runs an invocation with, when it brings its own (npm start, tests): see `withAppServices`. */
const hosted = new AsyncLocalStorage<AppServices>();

let fromAppSettings: AppServices | undefined;

/**
 * THE composition root: the services an invocation of the app works with. Under the Functions
 * host, built on first use from the app settings (so `func start` indexes the functions before
 * any setting is read); under a host that brings its own (npm start), the ones it runs the
 * invocation with. Each registration asks here, at its invocation, and hands them on.
 */
export function appServices(): AppServices {
  const own = hosted.getStore();
  if (own) return own;
  fromAppSettings ??= servicesFromAppSettings();
  return fromAppSettings;
}

/** The services from the app settings, the store opened on first use: a route that needs none (the OpenAPI document) runs without any. */
function servicesFromAppSettings(): AppServices {
  let store: BlogStore | undefined;
  return {
    get store() {
      return (store ??= createStore(loadSettings()));
    },
  };
}

/**
 * Runs `invocation` with `services`: how a host that loads this app next to others in one
 * process (the local host's systems) keeps each system's invocations on its own store and pacing.
 */
export const withAppServices = <T>(services: AppServices, invocation: () => T): T => hosted.run(services, invocation);
