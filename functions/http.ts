import { app } from "@azure/functions";
import { routes } from "../src/api/routes";
import { appServices } from "./composition-root";

// One HTTP function per route of the shared route table (src/api/routes.ts).
for (const route of routes) {
  app.http(route.name, {
    route: route.route,
    methods: [...route.methods],
    authLevel: "anonymous",
    handler: (request, context) => route.handler(request, context, appServices()),
  });
}
