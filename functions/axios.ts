// axios, bundled into a file of its own (dist/deploy/axios.js): what functions/durable-client-http.ts loads on the first durable client.
export { default } from "axios";
