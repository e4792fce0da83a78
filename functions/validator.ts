// validator's URL check, bundled into a file of its own (dist/deploy/validator.js): what functions/durable-client-url.ts loads when a durable client first checks a URL.
export { default } from "validator/lib/isURL";
