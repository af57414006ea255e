-- ids (C): the ID policy of an enum open to plugins, in the generated C:
-- the header's range macros, taken and defined lists (for the plugin
-- loader), and the source's nnn_<enum>_range and nnn_<enum>_taken_by.

local ids = require("lock.ids")
local names = require("emit.c.names")

local M = {}

-- The policy of enum e in the generated records header (after the enum's
-- own type), as macros a plugin may use without linking libnnn. w is
-- codec.lua's line writer; cstr its C string literal.
function M.header(w, e, cstr, ccomment)
  local P = e.ids
  if not P then return end
  local E = "NNN_" .. e.name:upper()
  local x = ids.layout({ enums = { e } })[1]
  local used = {}
  for _, v in ipairs(e.values) do if not v.plugin then used[v.value] = true end end
  w("/* ID policy of %s (schema ids.%s): %s", e.name, e.name, ccomment(P.doc))
  for _, kind in ipairs(ids.KINDS) do
    if P[kind] then w(" * %s %s: %s", ids.WORDS[kind], ids.range_text(P[kind]), ccomment(P[kind].doc)) end
  end
  w(" */")
  w("#define %s_CORE_MIN %d", E, P.core.min)
  w("#define %s_CORE_MAX %d", E, P.core.max)
  w("#define %s_THIRD_PARTY_MIN %d", E, P.third_party.min)
  w("#define %s_THIRD_PARTY_MAX %d", E, P.third_party.max)
  if P.never then
    w("#define %s_NEVER_MIN %d", E, P.never.min)
    w("#define %s_NEVER_MAX %d", E, P.never.max)
  end
  local free = ids.free_in({ x }, used)
  w("/* The lowest core %s neither defined nor taken: the next core value's (-1: none). */", ids.id_word(e.name))
  w("#define %s_NEXT_CORE %d", E, free or -1)
  w("/* The %ss third parties hold (ids.%s.taken), as X(id, by, name). */", ids.id_word(e.name), e.name)
  if #(P.taken or {}) == 0 then
    w("#define %s_TAKEN(X)", E)
  else
    w("#define %s_TAKEN(X) \\", E)
    for i, t in ipairs(P.taken) do
      w("\tX(%d, %s, %s)%s", t.id, cstr(t.by), cstr(t.name), i < #P.taken and " \\" or "")
    end
  end
  -- The schema's own values, so that a plugin can tell without linking
  -- libnnn which IDs the host decodes itself (those take no codec).
  local own = {}
  for _, v in ipairs(e.values) do if not v.plugin then own[#own + 1] = v end end
  w("/* The %ss this schema defines, as X(id, name). */", ids.id_word(e.name))
  if #own == 0 then
    w("#define %s_DEFINED(X)", E)
  else
    w("#define %s_DEFINED(X) \\", E)
    for i, v in ipairs(own) do
      w("\tX(%d, %s)%s", v.value, cstr(v.name), i < #own and " \\" or "")
    end
  end
  w("")
end

-- The functions over enum e's ID policy (libnnn's: the functions header).
function M.functions(w, e)
  if not e.ids then return end
  w("/* The range of the policy a %s is in. */", ids.id_word(e.name))
  w("NNN_API nnn_id_range_t nnn_%s_range(int64_t value);", e.name)
  w("/* Who holds a %s, as \"by (name)\", per ids.%s.taken; NULL when nobody is recorded. */",
    ids.id_word(e.name), e.name)
  w("NNN_API const char *nnn_%s_taken_by(int64_t value);", e.name)
  w("")
end

function M.source(w, e, cstr)
  local P = e.ids
  if not P then return end
  local E = "NNN_" .. e.name:upper()
  w("nnn_id_range_t nnn_%s_range(int64_t value)", e.name)
  w("{")
  w("\tif (value >= %s_CORE_MIN && value <= %s_CORE_MAX)", E, E)
  w("\t\treturn NNN_ID_CORE;")
  w("\tif (value >= %s_THIRD_PARTY_MIN && value <= %s_THIRD_PARTY_MAX)", E, E)
  w("\t\treturn NNN_ID_THIRD_PARTY;")
  w("\treturn NNN_ID_NEVER;")
  w("}")
  w("")
  local cases = {}
  for _, t in ipairs(P.taken or {}) do cases[#cases + 1] = { string.format("%d", t.id), ids.holder(t) } end
  names.string_switch(w, string.format("const char *nnn_%s_taken_by(int64_t value)", e.name), cases)
end

return M
