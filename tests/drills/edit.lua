-- edit.lua: applies a growth drill's edit to a copy of schema/nnn.lua, as a
-- maintainer would: in the text, keeping every comment and every line it
-- does not touch, so the result is the file a maintainer would commit.
--
--   lua5.4 tests/drills/edit.lua GROW.lua SCHEMA [FRAGMENT...]
--
-- GROW.lua runs with, besides the standard library:
--   schema          the schema before the edit, as gen/schema/check.lua
--                   loads and checks it (the generator's own view of it)
--   edit            the text of SCHEMA: edit:at(step, ...) names an entry by
--                   keys ("enums"), element names ("activation_id": the
--                   element whose `name` is that) and indices; the handle has
--                   :text(), :value(), :set(text), :append(text),
--                   :insert_before(text), :insert_after(text), :remove()
--   next_free(enum) the number a new core value of that enum takes: the
--                   lowest one no value of the schema uses, none of the IDs
--                   the schema's `ids` policy marks taken, inside its core
--                   range when it has one, and none that a plugin fragment
--                   of the tree (FRAGMENT, e.g. examples/*/schema.lua) uses
--                   (tests/tools/schemaq.lua, which the tests use too)
--   find(list, name) the element of a list (of the loaded schema) by name
--   variant_holder(enum) the record with the variant an enum's values select
--   unreferenced()  { record, index, field } for every field that no rule, io,
--                   count or tag of the schema names: a field a maintainer can
--                   remove or retype without touching anything else
--   var(name, value) a shell variable for the drill's checks (drill.vars)
--   expect(text)    a line the drill expects in check-compat's refusal
--                   (drill.expect), for breaking drills
-- The edited text is written back to SCHEMA; nothing is written when GROW.lua
-- fails. Errors name the step of the path that was not found.

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/../.."
package.path = root .. "/tests/tools/?.lua;" .. package.path

local function die(fmt, ...)
  io.stderr:write("drill edit: ", string.format(fmt, ...), "\n")
  os.exit(2)
end

local grow_path, schema_path = arg[1], arg[2]
if not grow_path or not schema_path then die("usage: edit.lua GROW.lua SCHEMA [FRAGMENT...]") end
local fragments = {}
for i = 3, #arg do fragments[#fragments + 1] = arg[i] end

------------------------------------------------------------ a Lua table reader

-- Tokens of Lua source with their byte spans; comments and blanks dropped.
local function tokenize(src)
  local toks, i, n = {}, 1, #src
  local function long_end(at)
    local eq = src:match("^%[(=*)%[", at)
    if not eq then return nil end
    local _, e = src:find("]" .. eq .. "]", at, true)
    return e or n
  end
  while i <= n do
    local c = src:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif src:sub(i, i + 1) == "--" then
      i = (long_end(i + 2) or src:find("\n", i, true) or n) + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and src:sub(j, j) ~= c do j = j + (src:sub(j, j) == "\\" and 2 or 1) end
      toks[#toks + 1] = { t = "str", s = i, e = j }
      i = j + 1
    elseif c == "[" and long_end(i) then
      local e = long_end(i)
      toks[#toks + 1] = { t = "str", s = i, e = e }
      i = e + 1
    elseif c:match("[%a_]") then
      local s, e = src:find("^[%w_]+", i)
      toks[#toks + 1] = { t = "name", s = s, e = e, v = src:sub(s, e) }
      i = e + 1
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local s, e = src:find("^0[xX][%x%.]+", i)
      if not s then s, e = src:find("^%d*%.?%d*[eE][%+%-]?%d+", i) end
      if not s then s, e = src:find("^%d*%.?%d*", i) end
      toks[#toks + 1] = { t = "num", s = s, e = e }
      i = e + 1
    else
      local op = src:match("^%.%.%.", i) or src:match("^[=~<>]=", i) or src:match("^%.%.", i)
        or src:match("^//", i) or src:match("^::", i) or src:match("^<<", i) or src:match("^>>", i) or c
      toks[#toks + 1] = { t = "op", s = i, e = i + #op - 1, v = op }
      i = i + #op
    end
  end
  return toks
end

-- A table constructor: its items, each with its key (nil for a list
-- element), the span of its value, its separator and, for a table value,
-- the nested node.
local function parse_table(src, toks, k)
  local node = { open = toks[k].s, items = {} }
  k = k + 1
  while toks[k] and toks[k].v ~= "}" do
    local item = { s = toks[k].s }
    if toks[k].t == "name" and toks[k + 1] and toks[k + 1].v == "=" then
      item.key = toks[k].v
      k = k + 2
    elseif toks[k].v == "[" then
      die("%s: a [key] = ... entry at byte %d: the drill editor reads name = value and list entries only",
        schema_path, toks[k].s)
    end
    item.vs = toks[k].s
    if toks[k].v == "{" then
      item.node, k = parse_table(src, toks, k)
      item.ve = item.node.close
    else
      local depth, last = 0, nil
      while toks[k] do
        local v = toks[k].v
        if depth == 0 and (v == "," or v == ";" or v == "}") then break end
        if v == "{" or v == "(" or v == "[" then depth = depth + 1 end
        if v == "}" or v == ")" or v == "]" then depth = depth - 1 end
        last = toks[k]
        k = k + 1
      end
      if not last then die("%s: an empty entry at byte %d", schema_path, item.s) end
      item.ve = last.e
    end
    if toks[k] and (toks[k].v == "," or toks[k].v == ";") then
      item.sep = toks[k].s
      k = k + 1
    end
    node.items[#node.items + 1] = item
  end
  if not toks[k] then die("%s: a table opened at byte %d is not closed", schema_path, node.open) end
  node.close = toks[k].s
  return node, k + 1
end

-- The table the schema file returns.
local function parse(src)
  local toks = tokenize(src)
  for k = #toks, 1, -1 do
    if toks[k].v == "return" and toks[k + 1] and toks[k + 1].v == "{" then
      local node = parse_table(src, toks, k + 1)
      return { s = toks[k + 1].s, vs = toks[k + 1].s, ve = node.close, node = node }
    end
  end
  die("%s: no `return { ... }`: the drill editor edits a schema that returns its table", schema_path)
end

------------------------------------------------------------ the editor

local Edit = {}
Edit.__index = Edit
local Handle = {}
Handle.__index = Handle

local function literal(text)
  local f = load("return " .. text, "=value", "t", {})
  local ok, v = pcall(f or error)
  return ok and v or nil
end

function Edit:at(...)
  return setmetatable({ ed = self, path = { ... } }, Handle)
end

function Handle:label()
  local parts = {}
  for _, p in ipairs(self.path) do parts[#parts + 1] = tostring(p) end
  return table.concat(parts, " > ")
end

-- The item the path names in the current text.
function Handle:item()
  local it = parse(self.ed.src)
  for i, step in ipairs(self.path) do
    local node = it.node
    if not node then die("%s: %s: step %d (%s) is not a table", schema_path, self:label(), i, tostring(step)) end
    local found
    if type(step) == "number" then
      local n = 0
      for _, x in ipairs(node.items) do
        if not x.key then
          n = n + 1
          if n == step then found = x end
        end
      end
    else
      for _, x in ipairs(node.items) do if x.key == step then found = x end end
      if not found then
        for _, x in ipairs(node.items) do
          if not x.key and x.node then
            for _, y in ipairs(x.node.items) do
              if y.key == "name" and literal(self.ed.src:sub(y.vs, y.ve)) == step then found = x end
            end
          end
        end
      end
    end
    if not found then die("%s: %s: no %s here", schema_path, self:label(), tostring(step)) end
    it = found
  end
  return it
end

function Handle:text()
  local it = self:item()
  return self.ed.src:sub(it.vs, it.ve)
end

function Handle:value() return literal(self:text()) end

function Edit:splice(from, to, text)
  self.src = self.src:sub(1, from - 1) .. text .. self.src:sub(to + 1)
end

-- The blanks before position p on its line, or nil when p is not the first
-- thing on its line.
function Edit:indent_at(p)
  local ls = p
  while ls > 1 and self.src:sub(ls - 1, ls - 1) ~= "\n" do ls = ls - 1 end
  local pre = self.src:sub(ls, p - 1)
  return pre:match("^[ \t]*$") and pre or nil, ls
end

local function reindent(text, indent)
  return (text:gsub("\n", "\n" .. indent))
end

function Handle:set(text)
  local it = self:item()
  self.ed:splice(it.vs, it.ve, text)
end

function Handle:insert_before(text)
  local it = self:item()
  local indent = self.ed:indent_at(it.s)
  if indent then
    self.ed:splice(it.s, it.s - 1, reindent(text, indent) .. ",\n" .. indent)
  else
    self.ed:splice(it.s, it.s - 1, text .. ", ")
  end
end

function Handle:insert_after(text)
  local it = self:item()
  local indent = self.ed:indent_at(it.s) or ""
  if it.sep then
    self.ed:splice(it.sep + 1, it.sep, "\n" .. indent .. reindent(text, indent) .. ",")
  else
    self.ed:splice(it.ve + 1, it.ve, ",\n" .. indent .. reindent(text, indent))
  end
end

-- A new last element of the list this handle names.
function Handle:append(text)
  local it = self:item()
  if not it.node or #it.node.items == 0 then die("%s: %s: not a list with elements", schema_path, self:label()) end
  local n = 0
  for _, x in ipairs(it.node.items) do if not x.key then n = n + 1 end end
  local path = { table.unpack(self.path) }
  path[#path + 1] = n
  setmetatable({ ed = self.ed, path = path }, Handle):insert_after(text)
end

-- Removes the element; its lines go with it when it has them to itself.
function Handle:remove()
  local it = self:item()
  local src = self.ed.src
  local last = it.sep or it.ve
  local indent, ls = self.ed:indent_at(it.s)
  local rest_end = src:find("\n", last + 1, true) or #src
  if indent and src:sub(last + 1, rest_end):match("^[ \t]*\n?$") then
    self.ed:splice(ls, rest_end, "")
  else
    local e = last
    while src:sub(e + 1, e + 1) == " " do e = e + 1 end
    self.ed:splice(it.s, e, "")
  end
end

------------------------------------------------------------ the schema's logic

-- Loaded and checked by the generator; the helpers are the tests' own
-- (tests/tools/schemaq.lua), with the tree's plugin fragments' IDs taken.
local schemaq = require("schemaq")
local ok, q = pcall(schemaq.load, schema_path, fragments)
if not ok then die("%s does not load before the edit: %s", schema_path, tostring(q)) end
local schema, find = q.s, schemaq.find

-- Every field no rule, io, count or tag names, in schema order.
local function unreferenced()
  local words = {}
  local function words_of(x)
    if type(x) == "string" then
      for w in x:gmatch("[%a_][%w_]*") do words[w] = true end
    end
  end
  -- A rule or io names fields in its strings and lists of strings (not in
  -- the tables the checker links to it).
  local function collect(x)
    for k, v in pairs(x or {}) do
      if k ~= "doc" then
        words_of(v)
        if type(v) == "table" then for _, y in ipairs(v) do words_of(y) end end
      end
    end
  end
  for _, r in ipairs(schema.records) do
    for _, rule in ipairs(r.rules or {}) do collect(rule) end
    collect(r.io)
    for _, f in ipairs(r.fields) do words_of(f.count); words_of(f.tag) end
  end
  local out = {}
  for _, r in ipairs(schema.records) do
    for j, f in ipairs(r.fields) do
      if not words[f.name] then out[#out + 1] = { record = r, index = j, field = f } end
    end
  end
  return out
end

------------------------------------------------------------ run the drill's edit

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then die("cannot read %s", path) end
  local t = f:read("a")
  f:close()
  return t
end

local function spill(path, text, mode)
  local f = io.open(path, mode or "wb")
  if not f then die("cannot write %s", path) end
  f:write(text)
  f:close()
end

local out_dir = os.getenv("DRILL_OUT") or "."
local vars, expects = {}, {}
local ed = setmetatable({ src = slurp(schema_path) }, Edit)
local env = setmetatable({
  schema = schema,
  edit = ed,
  next_free = q.next_free,
  find = find,
  variant_holder = q.variant_holder,
  unreferenced = unreferenced,
  var = function(name, value)
    if not tostring(name):match("^[%a_][%w_]*$") then die("var: bad shell name %s", tostring(name)) end
    vars[#vars + 1] = string.format("%s='%s'\n", name, (tostring(value):gsub("'", "'\\''")))
  end,
  expect = function(text) expects[#expects + 1] = text .. "\n" end,
}, { __index = _G })
local chunk, err = loadfile(grow_path, "t", env)
if not chunk then die("%s", err) end
local gok, gerr = pcall(chunk)
if not gok then die("%s: %s", grow_path, tostring(gerr)) end
spill(schema_path, ed.src)
spill(out_dir .. "/drill.vars", table.concat(vars), "ab")
spill(out_dir .. "/drill.expect", table.concat(expects), "ab")
