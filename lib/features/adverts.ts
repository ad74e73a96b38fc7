/**
 * Adverts (rule 15): every intervals.adverts, refresh the serverbundle's enabled adverts and broadcast the next
 * one. When the service is unreachable the last list keeps rotating. intervals.adverts = 0 switches them off.
 */
import { describeError } from "../api/client.ts";
import type { Feature } from "../feature.ts";
import type { Messages } from "../messages.ts";
import { advertPrefix, AdvertRotation, type ColourMode, formatAdvert } from "./adverts-format.ts";

/** The chat lines of an advert on a console of this colour mode, each with the prefix it can show. */
export function advertLines(content: string, messages: Messages, colours: ColourMode): string[] {
  const prefix = advertPrefix(messages.t("advert.prefix"), messages.t("advert.prefix_ascii"), colours);
  return formatAdvert(content, { prefix, colours });
}

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
    for (const line of advertLines(advert.content, messages, bridge.caps.colours ?? "strip")) {
      await bridge.message(null, line);
    }
    log.info(`advert shown: ${advert.title}`, { advert: advert.id });
  });
};
