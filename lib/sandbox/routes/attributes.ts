// User attribute definitions and values (the agent's playtime).
import { isoformat, normalizeUuid } from "../format.ts";
import { attributeDefinitionModel } from "../models.ts";
import { ApiError, must, notFound, type Ctx, type Route } from "../http.ts";
import { ATTRIBUTE_TYPES, TIME_INTERVALS, type AttributeDefinitionRecord } from "../state.ts";
import { opt, req } from "../validate.ts";

function definition(ctx: Ctx) {
  const key = ctx.params[0]!;
  const id = normalizeUuid(key);
  const found =
    (id && ctx.state.attributeDefinitions.get(id)) ||
    [...ctx.state.attributeDefinitions.values()].find((d) => d.name === key);
  if (!found) throw notFound("Attribute definition");
  return attributeDefinitionModel(found);
}

function listDefinitions(ctx: Ctx) {
  const name = ctx.input.query(ctx.query, "name");
  ctx.input.done();
  return [...ctx.state.attributeDefinitions.values()]
    .filter((d) => name === null || d.name === name)
    .map(attributeDefinitionModel);
}

/** A second definition with the same name is refused with 409 `already_exists`. */
function createDefinition(ctx: Ctx) {
  const body = ctx.input.body<Omit<AttributeDefinitionRecord, "id">>(ctx.body, {
    name: req("str"),
    title: req("str"),
    unit: req("str"),
    type: req({ enum: ATTRIBUTE_TYPES }),
    statistics_interval: opt("str"),
    accumulation_interval: opt({ enum: TIME_INTERVALS }),
    unspecific: req("bool"),
    requirement_set_id: opt("uuid"),
  });
  ctx.input.done();
  if ([...ctx.state.attributeDefinitions.values()].some((d) => d.name === body.name))
    throw new ApiError(409, "already_exists", "Attribute definition already exists.");
  return attributeDefinitionModel(ctx.state.addAttributeDefinition(body));
}

/** Stores a value and echoes UserAttributeModelAdd (no id). `value` is a string in the model but must be numeric. */
function addAttribute(ctx: Ctx) {
  const { state, input } = ctx;
  const body = input.body<{
    definition_id: string;
    user_id: string;
    value: string;
    serverbundle_id: string | null;
    date: number | null;
  }>(ctx.body, {
    definition_id: req("uuid"),
    user_id: req("uuid"),
    value: req("str"),
    serverbundle_id: opt("uuid"),
    date: opt("datetime"),
  });
  if (typeof body.value === "string" && !Number.isFinite(Number(body.value.trim() || "x")))
    input.issues.push({ loc: ["body", "value"], msg: "value is not a valid float", type: "type_error.float" });
  input.done();
  must(state.attributeDefinitions, body.definition_id, "Attribute definition");
  must(state.users, body.user_id, "User");
  if (body.serverbundle_id) must(state.serverbundles, body.serverbundle_id, "Serverbundle");
  const record = { ...body, date: body.date ?? state.now() };
  state.attributes.push(record);
  return {
    date: isoformat(record.date),
    value: record.value,
    definition_id: record.definition_id,
    serverbundle_id: record.serverbundle_id,
    user_id: record.user_id,
  };
}

export const attributeRoutes: Route[] = [
  { method: "GET", path: "/user/attribute/definition", handle: listDefinitions },
  { method: "POST", path: "/user/attribute/definition", handle: createDefinition },
  { method: "GET", path: "/user/attribute/definition/{uuid_or_name}", handle: definition },
  { method: "POST", path: "/user/attribute/", handle: addAttribute },
];
