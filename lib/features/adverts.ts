/**
 * Adverts (rule 15): every intervals.adverts, refresh the serverbundle's enabled adverts and broadcast the next
 * one. When the service is unreachable the last list keeps rotating. intervals.adverts = 0 switches them off.
 */
import { describeError } from "../api/client.ts";
import type { Feature } from "../feature.ts";
import { AdvertRotation, formatAdvert } from "./adverts-format.ts";

export const adverts: Feature = (agent) => {
  const { api, bridge, config, logger, messages } = agent.deps;
  const log = logger.withTag("adverts");
  const rotation = new AdvertRotation();
  if (config.intervals.adverts === 0) return log.info("adverts are off (intervals.adverts = 0)");

  agent.job("adverts", config.intervals.adverts, async () => {
    const res = await api.getAdverts(agent.bundleId);
    if (res.ok) rotation.update(res.value);
    else log.warn(`adverts not refreshed: ${describeError(res.error)}; showing the last ones`);
    const advert = rotation.next();
    if (!advert) return;
    const colours = bridge.caps.colours ?? "strip";
    const lines = formatAdvert(advert.content, { prefix: messages.t("advert.prefix"), colours });
    for (const line of lines) await bridge.message(null, line);
    log.info(`advert shown: ${advert.title}`, { advert: advert.id });
  });
};
