import { createHash, randomBytes } from "node:crypto";
import { badRequest, notFound } from "../wire/errors";
import { isObject, type JsonObject } from "../wire/json";
import { newEtag } from "./system-properties";

/** What a container is provisioned with: a fixed number of RU/s, or autoscale up to a maximum. */
export type Throughput = { manual: number } | { autoscaleMax: number };

/** A container without a throughput of its own gets the service's minimum. */
export const DEFAULT_THROUGHPUT: Throughput = { manual: 400 };

/**
 * Throughput offers (`offers/<rid>`), one per container, as the service keeps them beside the
 * resources: what the SDKs read and replace a container's throughput through. The figures are
 * recorded, not enforced (the throughput budget, `--operations-per-second`, is what throttles).
 */
export class Offers {
  private readonly byRid = new Map<string, JsonObject>();

  constructor(
    private readonly now: () => number,
    /** Told about every change (the data directory's journal). */
    private readonly journal: (record: JsonObject) => void,
  ) {}

  /** The offer of a new container (`rid`, `self`); `from` derives its id instead of drawing one (loading older data). */
  create(container: JsonObject, throughput: Throughput, from?: string): JsonObject {
    const bytes = from === undefined ? randomBytes(3) : createHash("sha256").update(from).digest().subarray(0, 3);
    const rid = bytes.toString("base64").replace(/\//g, "-");
    const offer: JsonObject = {
      id: rid,
      _rid: rid,
      _self: `offers/${rid}/`,
      resource: container._self as string,
      offerType: "Invalid",
      offerResourceId: container._rid as string,
      offerVersion: "V2",
      content: contentOf(throughput),
      _etag: newEtag(),
      _ts: this.now(),
    };
    this.set(offer);
    return offer;
  }

  /** Throws a 400 for a throughput the service would refuse, before anything is created. */
  check(throughput: Throughput): void {
    contentOf(throughput);
  }

  /** Loads an offer as the journal recorded it. */
  load(offer: JsonObject): void {
    this.byRid.set(offer._rid as string, offer);
  }

  list(): JsonObject[] {
    return [...this.byRid.values()];
  }

  ofContainer(collectionRid: string): JsonObject | undefined {
    return this.list().find((offer) => offer.offerResourceId === collectionRid);
  }

  read(rid: string): JsonObject {
    const offer = this.byRid.get(rid);
    if (!offer) throw notFound(`Resource Not Found. Offer '${rid}' does not exist.`);
    return offer;
  }

  /** Replaces an offer's throughput (manual RU/s, or the autoscale maximum). */
  replace(rid: string, body: unknown): JsonObject {
    const offer = this.read(rid);
    if (!isObject(body) || !isObject(body.content)) throw badRequest("An offer needs its content.");
    const content = body.content;
    const autoscale = isObject(content.offerAutopilotSettings) ? content.offerAutopilotSettings.maxThroughput : undefined;
    const throughput: Throughput = typeof autoscale === "number" ? { autoscaleMax: autoscale } : { manual: Number(content.offerThroughput) };
    const next = { ...offer, content: contentOf(throughput), _etag: newEtag(), _ts: this.now() };
    this.set(next);
    return next;
  }

  /** Drops the offer of a deleted container. */
  drop(collectionRid: string): void {
    const offer = this.ofContainer(collectionRid);
    if (!offer) return;
    this.byRid.delete(offer._rid as string);
    this.journal({ op: "dropOffer", rid: offer._rid });
  }

  /** Removes an offer as the journal recorded its drop. */
  remove(rid: string): void {
    this.byRid.delete(rid);
  }

  private set(offer: JsonObject): void {
    this.byRid.set(offer._rid as string, offer);
    this.journal({ op: "offer", resource: offer });
  }
}

/** The service's limits: manual 400 RU/s and up in hundreds; autoscale 1,000 RU/s and up in thousands. */
function contentOf(throughput: Throughput): JsonObject {
  if ("autoscaleMax" in throughput) {
    const max = throughput.autoscaleMax;
    if (!Number.isInteger(max) || max < 1000 || max % 1000 !== 0)
      throw badRequest("The autoscale maximum throughput must be a multiple of 1000, at least 1000.");
    return { offerThroughput: max / 10, offerAutopilotSettings: { maxThroughput: max }, offerIsRUPerMinuteThroughputEnabled: false };
  }
  const ru = throughput.manual;
  if (!Number.isInteger(ru) || ru < 400 || ru % 100 !== 0) throw badRequest("The throughput must be a multiple of 100, at least 400.");
  return { offerThroughput: ru, offerIsRUPerMinuteThroughputEnabled: false };
}

/** The throughput a container-creating request asks for (`x-ms-offer-throughput`, or autoscale settings), if any. */
export function requestedThroughput(header: (name: string) => string | undefined): Throughput | undefined {
  const manual = header("x-ms-offer-throughput");
  if (manual !== undefined) return { manual: Number(manual) };
  const autoscale = header("x-ms-cosmos-offer-autopilot-settings");
  if (autoscale === undefined) return undefined;
  try {
    const settings = JSON.parse(autoscale) as { maxThroughput?: unknown };
    return { autoscaleMax: Number(settings.maxThroughput) };
  } catch {
    throw badRequest("x-ms-cosmos-offer-autopilot-settings must be JSON.");
  }
}
