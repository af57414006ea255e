-- sdkfrag: plugin fragments that together use everything the schema
-- language lets a fragment use, for tests/integration/test_sdk.c to build out of tree
-- against an installed nnnkit.
--
--   lua5.4 tests/tools/sdkfrag.lua SCHEMA DIR
--     writes DIR/<name>.lua (a fragment) and DIR/<name>.c (a plugin that
--     declares its IDs with trivial kernels) for each name it prints, one a
--     line; exit 1 with a message when the language offers a fragment
--     something no case here uses
--
-- What must be covered is read from gen/schema/lang.lua at run time: every
-- rule kind marked `plugin`, every dims-pattern form, every field type
-- lang.fragment_types gives for SCHEMA, every reference form a fragment's
-- rules can take, and references to the layer's shared fields. A kind or
-- form added to the language later fails here until a case uses it.

local schema, dir = ...
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
package.path = here .. "/../../gen/?.lua;" .. package.path

local lang = require("schema.lang")
local s = require("schema.check")(schema)

local function fail(fmt, ...)
  io.stderr:write("sdkfrag: ", string.format(fmt, ...), "\n")
  os.exit(1)
end

-- Every field type, one field each: f_<type>.
local types = lang.fragment_types(s)
local function fields()
  local list = {}
  for _, t in ipairs(types) do
    list[#list + 1] = { name = "f_" .. t.name, type = t.name, param = t.name == "tensor" or nil,
                        doc = "A field of type " .. t.name .. "." }
  end
  return list
end
local has = {}
for _, t in ipairs(types) do has[t.name] = true end
local function need(t)
  if not has[t] then fail("the cases need a field of type %s, which fragments can no longer hold", t) end
  return "f_" .. t
end

-- What the cases used, to compare with what the language offers.
local used = { rule = {}, pattern = {}, form = {}, shared = false }
local function rule(kind, t)
  used.rule[kind] = true
  t.kind, t.doc = kind, t.doc or ("A " .. kind .. " rule.")
  return t
end
local function ref(form, text)
  used.form[form] = true
  return text
end
local function pat(p)
  for _, e in ipairs(p) do
    used.pattern[e:match("^[a-z]") and "ref" or e] = true
  end
  return p
end

-- The rules of each kind, for a layer's record (shared = true: it may
-- reference the layer's shared fields) or an activation's.
local CASES = {
  finite = function()
    return { rule("finite", { field = ref("name", need("f32")) }) }
  end,
  min = function()
    return {
      rule("min", { field = ref("name", need("i32")), value = 1 }),
      rule("min", { field = ref("ref[i]", need("i32_array") .. "[0]"), value = 0 }),
      rule("min", { field = ref("name.sub", need("tensor") .. ".dims[-1]"), value = 1 }),
    }
  end,
  range = function()
    return {
      rule("range", { field = need("f32"), min = 0, max = 1, min_open = true, max_open = true }),
      rule("range", { field = need("u8"), max = 200 }),
      rule("range", { field = need("u64"), min = 1 }),
      rule("range", { field = need("i32"), min = -5, max = 5 }),
    }
  end,
  dims = function(shared)
    local t = need("tensor")
    local list = {
      rule("dims", { field = ref("name.sub", t .. ".dims"), pattern = pat({ "+", "*", "+..." }) }),
      rule("dims", { field = ref("name", need("i32_array")), pattern = pat({ need("i32"), t .. ".dims[0]" }) }),
    }
    if shared then
      -- The layer's shared bias, tied to the layer's own tensor.
      used.shared = true
      list[#list + 1] = rule("dims", { field = "bias.dims", pattern = pat({ t .. ".dims[-1]" }) })
      list[#list + 1] = rule("min", { field = "bias.dims[0]", value = 0 })
    end
    return list
  end,
}

-- A slice names several ints; no parameter type a fragment's rules take
-- accepts one (they are io's, which fragments do not have). Checked below.
local SLICE_TYPES = { ref_int_array = true, ref_int_or_array = true }

local function check_coverage()
  for _, r in ipairs(lang.rules) do
    if r.plugin and not CASES[r.kind] then fail("rule kind %s has no case in tests/tools/sdkfrag.lua: add one", r.kind) end
    if r.plugin then
      for _, p in ipairs(r.params) do
        if SLICE_TYPES[p.type] then fail("rule kind %s takes slices (%s): add a case with a ref[from:to]", r.kind, p.name) end
      end
    end
  end
  for _, p in ipairs(lang.patterns) do
    if not used.pattern[p.form or "ref"] then fail("dims pattern %s has no case", p.form or p.ref) end
  end
  for _, r in ipairs(lang.references) do
    if not used.form[r.form] and r.form ~= "ref[from:to]" then fail("reference form %s has no case", r.form) end
  end
  if not used.shared then fail("no case references the layer's shared fields") end
end

-- Third-party IDs from the core schema's policy.
local function third_party(enum)
  local p = s.ids and s.ids[enum]
  if not p then fail("the core schema has no ID policy for %s", enum) end
  return p.third_party.min + 7
end
local layer_id, act_id = third_party("layer_id"), third_party("activation_id")

local function q(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then
    local parts = {}
    if #v > 0 then
      for _, x in ipairs(v) do parts[#parts + 1] = q(x) end
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
      for _, k in ipairs(keys) do parts[#parts + 1] = k .. " = " .. q(v[k]) end
    end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return tostring(v)
end

local C = [[
#include <string.h>

#include "%s_gen.h"

static nnn_status_t infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                          char *msg, size_t msg_size)
{
	(void)layer, (void)body, (void)msg, (void)msg_size;
	*out = *in;
	return NNN_OK;
}

static nnn_status_t forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	int64_t n = 1;
	(void)msg, (void)msg_size;
	for (int32_t i = 0; i < a->in->rank; i++)
		n *= a->in->dims[i];
	memcpy(a->y, a->x, (size_t)n * sizeof *a->y);
	return NNN_OK;
}

static nnn_status_t act_forward(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                                int threads)
{
	(void)act, (void)params, (void)shape, (void)x, (void)threads;
	return NNN_OK;
}

static const nnn_layer_type_t layer = {
	.size = sizeof(nnn_layer_type_t), .id = %d, .name = "%s_layer", %s_CODEC,
	.infer = infer, .forward = forward,
};
static const nnn_activation_type_t act = {
	.size = sizeof(nnn_activation_type_t), .id = %d, .name = "%s_act", %s_CODEC,
	.forward = act_forward,
};

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	static const nnn_plugin_info_t info = NNN_PLUGIN_INFO("%s", "1.0");
	nnn_status_t st = h->declare(d, &info);
	if (st == NNN_OK)
		st = h->add_layer(d, &layer);
	if (st == NNN_OK)
		st = h->add_activation(d, &act);
	return st;
}
]]

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- One fragment per rule kind: a layer and an activation, each with a field
-- of every type and that kind's rules.
local kinds = {}
for _, r in ipairs(lang.rules) do if r.plugin then kinds[#kinds + 1] = r.kind end end
local names = {}
for _, kind in ipairs(kinds) do
  if not CASES[kind] then fail("rule kind %s has no case in tests/tools/sdkfrag.lua: add one", kind) end
  local name = "frag_" .. kind
  local frag = {
    name = name,
    doc = "Every field type and every " .. kind .. " rule.",
    layers = { { value = layer_id, name = name .. "_layer", title = "L " .. kind, record = "lrec",
                 doc = "A layer." } },
    activations = { { value = act_id, name = name .. "_act", record = "arec", doc = "An activation." } },
    records = {
      { name = "lrec", section = "type_specific", doc = "The layer's fields.", fields = fields(),
        rules = CASES[kind](true) },
      { name = "arec", section = "activation_params", doc = "The activation's fields.", fields = fields(),
        rules = CASES[kind](false) },
    },
  }
  write(dir .. "/" .. name .. ".lua", "return " .. q(frag) .. "\n")
  local NAME = name:upper()
  write(dir .. "/" .. name .. ".c", string.format(C, name, layer_id, name, NAME .. "_LREC", act_id, name, NAME .. "_AREC",
    name))
  names[#names + 1] = name
end

-- A layer and an activation without fields of their own: no record (ABI 1.7).
do
  local name = "frag_noparams"
  local frag = {
    name = name,
    doc = "A layer and an activation without fields of their own.",
    layers = { { value = layer_id, name = name .. "_layer", doc = "A layer of the shared fields only." } },
    activations = { { value = act_id, name = name .. "_act", doc = "An activation without parameters." } },
  }
  write(dir .. "/" .. name .. ".lua", "return " .. q(frag) .. "\n")
  local NAME = name:upper()
  write(dir .. "/" .. name .. ".c", string.format(C, name, layer_id, name, NAME .. "_" .. NAME .. "_LAYER", act_id, name,
    NAME .. "_" .. NAME .. "_ACT", name))
  names[#names + 1] = name
end
check_coverage()
print(table.concat(names, "\n"))
