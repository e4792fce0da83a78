// moment, bundled into a file of its own (dist/deploy/moment.js): what functions/durable-timers.ts loads when the first orchestration runs.
import moment from "moment";
export = moment;
