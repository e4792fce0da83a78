// Stands in for moment in durable-functions (lazy/splits.ts). durable-functions calls moment only
// in an orchestration's context and its timer and HTTP polling tasks, and only as `moment(date)`
// and `moment.duration(...)`: a cold start that serves a request never does.
import type Moment from "moment";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = () => require("moment") as typeof Moment;

const moment = (...args: Parameters<typeof Moment>) => load()(...args);
moment.duration = (...args: Parameters<typeof Moment.duration>) => load().duration(...args);

export = moment;
