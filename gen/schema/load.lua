-- load: reads a schema file as data, in a sandbox (the checker,
-- gen/schema/check.lua, then checks what it returns). Returns the
-- function load_file(path) -> the table the file returns; a problem is an
-- error "schema error: ...".

-- The standard library a schema file may use: read-only copies, so a schema
-- cannot change the generator's own string, table or math; no math.random,
-- so output depends only on the schema.
local function read_only(lib, name, without)
  local copy = {}
  for k, v in pairs(lib) do if not without[k] then copy[k] = v end end
  return setmetatable({}, {
    __index = copy,
    __newindex = function(_, k)
      error(string.format("%s is read-only: cannot set %s.%s", name, name, tostring(k)), 2)
    end,
    __pairs = function() return next, copy, nil end,
    __metatable = false,
  })
end

local function sandbox()
  return {
    ipairs = ipairs, pairs = pairs, next = next, select = select, type = type,
    tostring = tostring, tonumber = tonumber, error = error, assert = assert,
    table = read_only(table, "table", {}),
    string = read_only(string, "string", { dump = true }),
    math = read_only(math, "math", { random = true, randomseed = true }),
  }
end

local function schema_error(msg)
  msg = tostring(msg)
  if msg:find("^schema error: ") then return msg end
  return "schema error: " .. msg
end

-- Loads the file as data, in a sandbox: the safe part of the standard library
-- (see sandbox) and `import`, which loads a schema file relative to the one
-- given to nnngen (plugin fragments and test variants build on nnn.lua).
local function load_file(path)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local env = sandbox()
  local loading = {}
  env.import = function(rel)
    if type(rel) ~= "string" then error("schema error: import needs a file name", 0) end
    local file = dir .. "/" .. rel
    if loading[file] then error("schema error: import cycle: " .. file .. " is imported while it is being loaded", 0) end
    local chunk, err = loadfile(file, "t", env)
    if not chunk then error("schema error: " .. err, 0) end
    loading[file] = true
    local ok, s = pcall(chunk)
    loading[file] = nil
    if not ok then error(schema_error(s), 0) end
    return s
  end
  local chunk, err = loadfile(path, "t", env)
  if not chunk then error("schema error: " .. err, 0) end
  local ok, s = pcall(chunk)
  if not ok then error(schema_error(s), 0) end
  if type(s) ~= "table" then error("schema error: " .. path .. " must return a table", 0) end
  return s
end

return load_file
