-- exports: libnnn's dynamic symbols against its public headers, for
-- tests/integration/test_exports.c.
--
--   lua5.4 tests/tools/exports.lua LIB HEADER...
--     LIB: libnnn.so.1; HEADER: every public header (runtime/include/nnn/*.h
--     and the generated nnn/schema_gen.h, or the installed include/nnn/*.h).
--     Prints each problem, one a line, and exits 1; else prints
--     "N exported, N declared" and exits 0. Exit 2: a tool failed or a
--     declaration could not be read.
--
-- The promise checked: LIB exports exactly the functions and objects the
-- headers declare with NNN_API (nnn/api.h), and the headers declare no
-- function or object of libnnn without it (that one would not be exported:
-- libnnn is built with -fvisibility=hidden). A declaration marked
-- NNN_PLUGIN_EXPORT is a plugin's entry point, not libnnn's. The list of
-- functions comes from the compiler (gcc -aux-info), so a declaration this
-- reader's scan of the text missed is a problem too, never a silent pass.
-- Names starting with "_" are the implementation's (C11 7.1.3): a
-- sanitizer's or the linker's, never nnnkit's.

local lib = arg[1]
local headers = { table.unpack(arg, 2) }
if not lib or #headers == 0 then
  io.stderr:write("usage: lua5.4 tests/tools/exports.lua LIB HEADER...\n")
  os.exit(2)
end

local function fail(fmt, ...)
  io.stderr:write("exports: " .. string.format(fmt, ...) .. "\n")
  os.exit(2)
end

local function run(cmd)
  local p = io.popen(cmd)
  local text = p:read("a")
  local ok, _, code = p:close()
  if not ok then fail("'%s' failed (%s)", cmd, tostring(code)) end
  return text
end

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function slurp(path)
  local f = io.open(path, "rb") or fail("cannot read %s", path)
  local t = f:read("a")
  f:close()
  return t
end

-- The headers' macros that a declaration may hold: function-like ones are
-- attributes (NNN_PRINTF(5, 6)), object-like ones naming an identifier are
-- names (NNN_PLUGIN_ENTRY).
local attr_macro, alias = {}, {}

-- The text the compiler reads: comments and preprocessor lines gone
-- (continuations joined first; their macros noted above), strings and
-- character constants kept.
local function code_of(text)
  text = text:gsub("\\\n", " ")
  local out, i, n = {}, 1, #text
  while i <= n do
    local c2 = text:sub(i, i + 1)
    local c = text:sub(i, i)
    if c2 == "/*" then
      local e = text:find("*/", i + 2, true) or fail("unterminated comment")
      out[#out + 1] = " "
      i = e + 2
    elseif c2 == "//" then
      i = text:find("\n", i, true) or n + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and text:sub(j, j) ~= c do j = j + (text:sub(j, j) == "\\" and 2 or 1) end
      out[#out + 1] = text:sub(i, j)
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  local lines = {}
  for line in (table.concat(out) .. "\n"):gmatch("([^\n]*)\n") do
    local fn = line:match("^%s*#%s*define%s+([%a_][%w_]*)%(")
    local name, value = line:match("^%s*#%s*define%s+([%a_][%w_]*)%s+([%a_][%w_]*)%s*$")
    if fn then attr_macro[fn] = true end
    if name then alias[name] = value end
    if not line:match("^%s*#") then lines[#lines + 1] = line end
  end
  return table.concat(lines, "\n")
end

-- The name a declaration declares: the identifier before its parameter
-- list, or an object's before its bounds or at its end; attributes
-- (NNN_PRINTF(...), __attribute__((...))) are skipped.
local function declared_name(decl)
  decl = decl:gsub("__attribute__%s*%b()", " "):gsub("([%a_][%w_]*)%s*(%b())", function(m, args)
    if attr_macro[m] then return " " end
  end)
  local name = decl:match("([%a_][%w_]*)%s*%(") or decl:match("([%a_][%w_]*)%s*%[") or
               decl:match("([%a_][%w_]*)%s*$")
  while alias[name] do name = alias[name] end
  return name
end

-- Every declaration (text between semicolons, after a closing brace) of
-- the headers: NNN_API ones, a plugin's entry point, and extern objects
-- without NNN_API.
local api, api_fn, plugin_side, problems = {}, {}, {}, {}
local function problem(fmt, ...) problems[#problems + 1] = string.format(fmt, ...) end
local code = {}
for i, h in ipairs(headers) do code[i] = code_of(slurp(h)) end
for i, h in ipairs(headers) do
  for chunk in (code[i] .. ";"):gmatch("([^;]*);") do
    local decl = chunk:match("[^{}]*$")
    local marked = decl:find("%f[%w_]NNN_API%f[^%w_]")
    local plugin = decl:find("%f[%w_]NNN_PLUGIN_EXPORT%f[^%w_]")
    if marked or plugin then
      local name = declared_name(decl:sub((marked or plugin) + (marked and 7 or 17)))
      if not name then fail("%s: cannot read the declaration '%s'", h, decl:gsub("%s+", " ")) end
      if plugin then
        plugin_side[name] = true
      else
        api[name] = h
        if decl:find("%(") and not decl:find("^%s*NNN_API%s+extern%f[^%w_]") then api_fn[name] = h end
      end
    elseif decl:find("^%s*extern%f[^%w_]") and not decl:find('^%s*extern%s*"C"') then
      problem("%s declares %s without NNN_API: libnnn does not export it",
              h, declared_name(decl) or decl:gsub("%s+", " "))
    end
  end
end

-- Every function the headers declare, as the compiler sees them.
local inc, seen, src = {}, {}, {}
for _, h in ipairs(headers) do
  local dir = h:match("^(.*)/nnn/[^/]*$") or fail("%s is not under a nnn/ folder", h)
  if not seen[dir] then seen[dir] = true; inc[#inc + 1] = "-I" .. shq(dir) end
  src[#src + 1] = string.format("#include <nnn/%s>", h:match("[^/]*$"))
end
local tmp = os.tmpname()
local f = io.open(tmp .. ".c", "w")
f:write(table.concat(src, "\n"), "\n")
f:close()
run(string.format("%s -std=c11 -fsyntax-only -aux-info %s %s %s 2>&1",
                  os.getenv("CC") or "cc", shq(tmp .. ".aux"), table.concat(inc, " "), shq(tmp .. ".c")))
local aux = slurp(tmp .. ".aux")
os.remove(tmp .. ".c"); os.remove(tmp .. ".aux"); os.remove(tmp)
local real = {}
for _, h in ipairs(headers) do real[run("realpath " .. shq(h)):gsub("\n$", "")] = h end
local compiler_fns = 0
for file, kind, decl in aux:gmatch("/%* ([^\n]-):%d+:(%a%a) %*/ ([^\n]*)") do
  local h = real[file] or real[run("realpath " .. shq(file)):gsub("\n$", "")]
  if h and kind:sub(2) == "C" and not decl:find("^static ") then
    local name = decl:match("([%a_][%w_]*) %(") or fail("cannot read '%s' from -aux-info", decl)
    compiler_fns = compiler_fns + 1
    if not api_fn[name] and not plugin_side[name] then
      problem("%s declares %s() without NNN_API: libnnn does not export it", h, name)
    end
  end
end
if compiler_fns == 0 then fail("the compiler saw no function in the headers") end

local exported, nexported = {}, 0
for name in run("nm -D --defined-only " .. shq(lib)):gmatch("%S+ %a ([^\n]+)") do
  name = name:gsub("@.*", "")
  if not name:find("^_") then exported[name] = true; nexported = nexported + 1 end
end
if nexported == 0 then fail("%s exports nothing: is it built?", lib) end

local names = {}
for name in pairs(exported) do names[#names + 1] = name end
for name in pairs(api) do if not exported[name] then names[#names + 1] = name end end
table.sort(names)
for _, name in ipairs(names) do
  if not api[name] then
    problem("%s exports %s, which no public header declares with NNN_API", lib, name)
  elseif not exported[name] then
    problem("%s declares %s with NNN_API, but %s does not export it", api[name], name, lib)
  end
end

if #problems > 0 then
  print(table.concat(problems, "\n"))
  os.exit(1)
end
local ndeclared = 0
for _ in pairs(api) do ndeclared = ndeclared + 1 end
print(string.format("%d exported, %d declared", nexported, ndeclared))
