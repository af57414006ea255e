-- check-csharp.lua: fails when C# sources use what Unity (IL2CPP, iOS,
-- WebGL) cannot run or what nnnkit's C# keeps out (docs/csharp.md,
-- "Unity-safe"): anything outside the base class library's allowed
-- namespaces, System.Reflection.Emit, `dynamic`, `unsafe`, threads;
-- System.Runtime.InteropServices outside the P/Invoke binding.
--
--   lua5.4 scripts/check-csharp.lua --mcs "MCS FLAGS" [--interop FILE.cs]...
--          [--ref ASSEMBLY]... FILE.cs...
--
-- Three looks, each catching what the others cannot:
--   1. the sources, comments and strings left out: the `using` directives,
--      the keywords (unsafe, dynamic, stackalloc, ...), the qualified names
--      of well-known forbidden namespaces, P/Invoke outside --interop files
--      (file and line for each);
--   2. the sources compiled together as a library with MCS FLAGS (the
--      build's: -langversion:7.2, no -unsafe), against the --ref assemblies;
--   3. that library's type and assembly references (ikdasm): every type it
--      uses is in an allowed namespace of the base class library's core
--      (mscorlib, System, System.Core) or of a --ref assembly (nnnkit's
--      own), whichever way the source spelt it (aliases, `var`, fully
--      qualified names), or one of the few the compiler itself emits.
-- Exit 0: clean; 1: a problem, each on stderr as FILE:LINE: what; 2: usage.

-- The namespaces every file may use (docs/csharp.md).
local ALLOWED = {
    ["System"] = true, ["System.IO"] = true, ["System.Text"] = true,
    ["System.Collections.Generic"] = true, ["System.Globalization"] = true,
}
-- The assemblies those namespaces' types live in (Mono's 4.x profile: HashSet
-- is System.Core's); a type of another namespace in them is refused all the same.
local BCL = { mscorlib = true, System = true, ["System.Core"] = true }
-- Only the --interop files (the P/Invoke binding, csharp/Runtime/Native.cs).
local INTEROP = "System.Runtime.InteropServices"
-- What mcs emits for plain C# (auto-properties, indexers, array literals,
-- iterators, `in` parameters), not anything the source names. Interlocked:
-- an iterator's GetEnumerator (atomic, no thread); a source naming it
-- (System.Threading) is caught in the source.
local COMPILER = {}
for n in ([[
System.Runtime.CompilerServices.CompilerGeneratedAttribute
System.Threading.Interlocked
System.Runtime.CompilerServices.RuntimeCompatibilityAttribute
System.Runtime.CompilerServices.CompilationRelaxationsAttribute
System.Runtime.CompilerServices.RuntimeHelpers
System.Runtime.CompilerServices.ExtensionAttribute
System.Runtime.CompilerServices.IsReadOnlyAttribute
System.Runtime.CompilerServices.IsByRefLikeAttribute
System.Runtime.CompilerServices.IteratorStateMachineAttribute
System.Runtime.InteropServices.InAttribute
System.Diagnostics.DebuggerBrowsableAttribute
System.Diagnostics.DebuggerBrowsableState
System.Diagnostics.DebuggerHiddenAttribute
System.Diagnostics.DebuggerStepThroughAttribute
System.Diagnostics.DebuggableAttribute
System.Diagnostics.DebuggableAttribute/DebuggingModes
System.Reflection.DefaultMemberAttribute
System.Collections.IEnumerable
System.Collections.IEnumerator
]]):gmatch("%S+") do COMPILER[n] = true end
-- Keywords that need what is forbidden: unsafe code, the DLR, varargs and
-- typed references, another assembly's alias.
local KEYWORDS = {
    unsafe = "unsafe code", fixed = "unsafe code (fixed)", stackalloc = "stackalloc",
    dynamic = "`dynamic` (the DLR: runtime code generation)", __arglist = "__arglist",
    __makeref = "__makeref", __reftype = "__reftype", __refvalue = "__refvalue",
}
-- Namespaces a source may name in full that are never allowed (the
-- compiled references catch every other spelling).
local FORBIDDEN_NS = { "System.Reflection", "System.Threading", "System.Diagnostics", "System.Net",
    "System.Linq", "System.Runtime", "System.Security", "System.Dynamic", "System.Xml", "System.Data",
    "System.Web", "System.Timers", "System.Media", "System.ComponentModel", "System.Configuration",
    "System.Resources", "System.Numerics", "System.Buffers", "System.Collections.Concurrent",
    "System.IO.Compression", "System.IO.Pipes", "System.IO.MemoryMappedFiles", "System.IO.IsolatedStorage",
    "System.Text.RegularExpressions", "Microsoft" }

local function usage(msg)
    io.stderr:write("check-csharp: " .. msg .. "\nusage: lua5.4 scripts/check-csharp.lua --mcs \"MCS FLAGS\" "
        .. "[--interop FILE.cs]... [--ref ASSEMBLY]... FILE.cs...\n")
    os.exit(2)
end

local mcs, interop, refs, files = nil, {}, {}, {}
do
    local i = 1
    while i <= #arg do
        local a = arg[i]
        if a == "--mcs" or a == "--interop" or a == "--ref" then
            if not arg[i + 1] then usage(a .. " needs a value") end
            if a == "--mcs" then mcs = arg[i + 1]
            elseif a == "--interop" then interop[arg[i + 1]] = true
            else refs[#refs + 1] = arg[i + 1] end
            i = i + 2
        elseif a:sub(1, 2) == "--" then
            usage("unknown option " .. a)
        else
            files[#files + 1] = a
            i = i + 1
        end
    end
end
if not mcs then usage("--mcs is needed (the build's compiler and flags)") end
if #files == 0 then usage("no source given") end

local problems = 0
local function problem(where, what)
    io.stderr:write(where .. ": " .. what .. "\n")
    problems = problems + 1
end

local function read(path)
    local f, err = io.open(path, "rb")
    if not f then
        io.stderr:write("check-csharp: " .. err .. "\n")
        os.exit(2)
    end
    local s = f:read("a")
    f:close()
    return s
end

-- The source with comments and the text of string and character literals
-- blanked (newlines kept, so lines still count); an interpolated string's
-- holes stay code.
local function code_of(src)
    local out, i, n = {}, 1, #src
    local function blank(s) return (s:gsub("[^\n]", " ")) end
    local string_at -- forward
    -- Code from i until `stop` (a "}" closing an interpolation hole) or the end.
    local function code(stop)
        local depth = 0
        while i <= n do
            local c, c2 = src:sub(i, i), src:sub(i, i + 1)
            if c2 == "//" then
                local j = src:find("\n", i, true) or n + 1
                out[#out + 1] = blank(src:sub(i, j - 1))
                i = j
            elseif c2 == "/*" then
                local _, j = src:find("*/", i + 2, true)
                j = j or n
                out[#out + 1] = blank(src:sub(i, j))
                i = j + 1
            elseif c == '"' or c2 == '@"' or c2 == '$"' or src:sub(i, i + 2) == '$@"' or src:sub(i, i + 2) == '@$"' then
                string_at()
            elseif c == "'" then
                local j = i + 1
                while j <= n and src:sub(j, j) ~= "'" and src:sub(j, j) ~= "\n" do
                    j = j + (src:sub(j, j) == "\\" and 2 or 1)
                end
                out[#out + 1] = blank(src:sub(i, j))
                i = j + 1
            else
                if stop then
                    if c == "{" then depth = depth + 1
                    elseif c == "}" then
                        if depth == 0 then return end
                        depth = depth - 1
                    end
                end
                out[#out + 1] = c
                i = i + 1
            end
        end
    end
    function string_at()
        local head = src:match('^[@$]*"', i)
        local verbatim, interp = head:find("@", 1, true), head:find("$", 1, true)
        out[#out + 1] = blank(head)
        i = i + #head
        while i <= n do
            local c = src:sub(i, i)
            if c == "\\" and not verbatim then
                out[#out + 1] = blank(src:sub(i, i + 1))
                i = i + 2
            elseif c == '"' and verbatim and src:sub(i + 1, i + 1) == '"' then
                out[#out + 1] = "  "
                i = i + 2
            elseif c == '"' or (c == "\n" and not verbatim) then
                out[#out + 1] = c == '"' and " " or c
                i = i + 1
                return
            elseif interp and src:sub(i, i + 1) == "{{" then
                out[#out + 1] = "  "
                i = i + 2
            elseif interp and c == "{" then
                out[#out + 1] = " "
                i = i + 1
                code(true)
                if i <= n then out[#out + 1] = " " i = i + 1 end
            else
                out[#out + 1] = blank(c)
                i = i + 1
            end
        end
    end
    code(false)
    return table.concat(out)
end

local function line_at(s, pos)
    local _, k = s:sub(1, pos):gsub("\n", "")
    return k + 1
end

local function forbidden_ns(name)
    for _, ns in ipairs(FORBIDDEN_NS) do
        if name == ns or name:sub(1, #ns + 1) == ns .. "." then return ns end
    end
end

-- 1. The sources.
local any_interop = false
for _, path in ipairs(files) do
    local src = code_of(read(path))
    local is_interop = interop[path] or false
    any_interop = any_interop or is_interop
    local function at(pos) return path .. ":" .. line_at(src, pos) end
    -- using directives: `using N;`, `using static T;`, `using A = N;`
    for pos, body in src:gmatch("()%f[%w_]using%s+([^;(]-);") do
        local static, target = body:match("^(static%s+)(.*)$")
        target = (target or body):gsub("^[%w_]+%s*=%s*", ""):gsub("%s+", ""):gsub("^global::", "")
        local ok
        if static then
            ok = ALLOWED[target:match("^(.*)%.[^.]+$") or ""]
        elseif body:find("=", 1, true) then
            ok = ALLOWED[target] or ALLOWED[target:match("^(.*)%.[^.]+$") or ""]
        else
            ok = ALLOWED[target]
        end
        if target == INTEROP or (target:match("^(.*)%.[^.]+$") == INTEROP and (static or body:find("=", 1, true))) then
            ok = is_interop
            if not ok then problem(at(pos), "using " .. target .. ": P/Invoke belongs in the binding ("
                .. "the --interop file) only") end
        elseif not ok then
            problem(at(pos), "using " .. target .. ": outside the allowed namespaces (System, System.IO, "
                .. "System.Text, System.Collections.Generic, System.Globalization)")
        end
    end
    -- extern alias: another assembly brought in under a name
    for pos in src:gmatch("()%f[%w_]extern%s+alias%f[^%w_]") do
        problem(at(pos), "extern alias: no assembly but mscorlib and nnnkit's own")
    end
    for pos, word in src:gmatch("()%f[%w_]([%w_]+)%f[^%w_]") do
        if KEYWORDS[word] and src:sub(pos - 1, pos - 1) ~= "@" then
            problem(at(pos), word .. ": " .. KEYWORDS[word] .. " is not Unity-safe")
        end
    end
    -- Qualified names of forbidden namespaces (also through global::).
    for pos, name in src:gmatch("()%f[%w_]([A-Z][%w_]*%.[%w_.]*[%w_])") do
        local ns = forbidden_ns(name)
        if ns and not (is_interop and (name == INTEROP or name:sub(1, #INTEROP + 1) == INTEROP .. ".")) then
            problem(at(pos), name .. ": " .. ns .. " is outside the allowed namespaces")
        end
    end
    -- P/Invoke: DllImport, or an extern method, outside the binding.
    if not is_interop then
        for pos in src:gmatch("()%f[%w_]DllImport%f[^%w_]") do
            problem(at(pos), "DllImport: P/Invoke belongs in the binding (the --interop file) only")
        end
        for pos in src:gmatch("()%f[%w_]extern%f[^%w_]") do
            if not src:find("^extern%s+alias", pos) then
                problem(at(pos), "extern: P/Invoke belongs in the binding (the --interop file) only")
            end
        end
    end
end

-- 2. Compiled with the build's compiler and language level.
local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local tmp = io.popen("mktemp -d"):read("l")
if not tmp then
    io.stderr:write("check-csharp: mktemp -d failed\n")
    os.exit(2)
end
local dll = tmp .. "/check.dll"
local cmd = mcs .. " -target:library -out:" .. sh_quote(dll)
for _, r in ipairs(refs) do cmd = cmd .. " -r:" .. sh_quote(r) end
for _, f in ipairs(files) do cmd = cmd .. " " .. sh_quote(f) end
local p = io.popen(cmd .. " 2>&1")
local compiler_out = p:read("a")
local compiled = p:close()
if not compiled then
    io.stderr:write(compiler_out)
    problem("check-csharp", "the sources do not compile with `" .. mcs .. "` (the build's language level, no -unsafe)")
else
    -- 3. What the compiled library references.
    local own = {}
    for _, r in ipairs(refs) do own[(r:match("([^/]*)%.[^.]*$") or r)] = true end
    p = io.popen("ikdasm " .. sh_quote(dll) .. " 2>&1")
    local il = p:read("a")
    if not p:close() then
        io.stderr:write(il)
        problem("check-csharp", "ikdasm could not read the compiled library")
    end
    local seen = {}
    for asm in il:gmatch("%.assembly%s+extern%s+([%w_.]+)") do
        if not BCL[asm] and not own[asm] and not seen["A" .. asm] then
            seen["A" .. asm] = true
            problem("references", "assembly " .. asm .. ": nothing outside the base class library's core "
                .. "(mscorlib, System, System.Core) and nnnkit's own")
        end
    end
    for asm, ty in il:gmatch("%[([%w_.]+)%]([%w_.`/]+)") do
        local full = ty:gsub("`%d+", "")
        local ns = full:match("^(.*)%.[^./]+[^.]*$") or ""
        ns = ns:gsub("/.*$", "")
        local ok = own[asm] or COMPILER[full] or ALLOWED[ns] or (ns == INTEROP and any_interop)
        if not ok and not seen[full] then
            seen[full] = true
            problem("references", "[" .. asm .. "]" .. full .. ": " .. (forbidden_ns(full) or ns)
                .. " is outside the allowed namespaces")
        end
    end
    if il:find("pinvokeimpl", 1, true) and not any_interop then
        problem("references", "a P/Invoke method (pinvokeimpl) outside the binding")
    end
end
os.execute("rm -rf " .. sh_quote(tmp))
if problems > 0 then
    io.stderr:write(("check-csharp: %d problem%s: not Unity-safe (docs/csharp.md, \"Unity-safe\")\n"):format(
        problems, problems == 1 and "" or "s"))
    os.exit(1)
end
