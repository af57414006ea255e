-- formula: the one parser of the schema's integer formulas (an enum value's
-- pad_before and pad_after; the shape rules of the io kinds, schema/io_kinds.lua),
-- with the evaluator each user needs:
--   M.range(text, names, bad)  the checker's: the range of every step, for
--                              names given as ranges; a step that may
--                              overflow int64_t, a divisor that is not a
--                              non-zero constant, and every syntax problem go
--                              to bad(fmt, ...)
--   M.eval(text, env)          the exact value for integer names, the way the
--                              generated C computes it (64 bits, "/" truncating
--                              toward zero)
--   M.c(text, name)            the C expression (int64_t), each name written
--                              as name(word) says: what emit/c puts in the
--                              generated codec for an io kind's `shape`
--   M.cs(text, name)           the same in C# (long): emit/cs's Formulas and
--                              padding functions
-- A padding formula's names are the generated function's own variables,
-- so emit/c copies it as it is.
--
-- The parser folds as it reads (an algebra's num, name, neg, add, sub, mul,
-- div), so the checker reports the first problem in reading order, whether a
-- range or the syntax.

local M = {}

local INT32_MAX = 2147483647
local I64_BOUND = 2.0 ^ 63

-- The kernel sizes the runtime passes to the padding formulas (nnn_rule_padding).
M.K_MIN, M.K_MAX = 1, INT32_MAX

-- C's truncating division of 64-bit integers.
function M.cdiv(a, b)
  local q = a // b
  if q < 0 and q * b ~= a then q = q + 1 end
  return q
end

-- Tokens, as C's tokenizer would split them. name(word) may refuse a name
-- (through bad); every other problem goes to bad.
local function number_token(text, i, bad)
  local digits = text:match("^%d+", i)
  local word = text:match("^[%w_.]+", i)
  if word ~= digits then bad("%s is not a decimal integer", word) end
  if #digits > 1 and digits:sub(1, 1) == "0" then
    bad("write %s without leading zeros (C reads it as octal)", digits)
  end
  local n = math.tointeger(tonumber(digits))
  if not n or n > INT32_MAX then bad("the number %s is too large (at most %d)", digits, INT32_MAX) end
  return { t = "num", v = n }, #digits
end

function M.tokens(text, bad, name)
  local toks, i = {}, 1
  while i <= #text do
    local c = text:sub(i, i)
    if c == " " then
      i = i + 1
    elseif c:match("%d") then
      local tok, len = number_token(text, i, bad)
      toks[#toks + 1] = tok
      i = i + len
    elseif c:match("[%a_]") then
      local word = text:match("^[%w_]+", i)
      if name then name(word) end
      toks[#toks + 1] = { t = word }
      i = i + #word
    elseif c:match("[%+%-%*/%(%)]") then
      local two = text:sub(i, i + 1)
      if two == "++" or two == "--" or two == "/*" or two == "//" then
        bad('"%s" is not an operator here: put a space between the two characters', two)
      end
      toks[#toks + 1] = { t = c }
      i = i + 1
    else
      bad('unexpected character "%s"', c)
    end
  end
  return toks
end

-- The grammar of schema/lang.lua's M.formula, folded with `alg`.
function M.fold(toks, alg, bad)
  local pos = 1
  local function peek() return toks[pos] and toks[pos].t end
  local expr
  local function unary()
    local t = peek()
    if t == "-" or t == "+" then
      pos = pos + 1
      local a = unary()
      if t == "+" then return a end
      return alg.neg(a)
    elseif t == "num" then
      pos = pos + 1
      return alg.num(toks[pos - 1].v)
    elseif t == "(" then
      pos = pos + 1
      local a = expr()
      if peek() ~= ")" then bad('missing ")"') end
      pos = pos + 1
      return a
    elseif t and t:match("^[%a_]") then
      pos = pos + 1
      return alg.name(t)
    end
    bad(t and 'expected a number, k or "(" before "%s"' or "expected a number, k or \"(\" at the end", t == "num" and toks[pos].v or t)
  end
  -- One level of binary operators: `ops` maps each to its algebra function.
  local function level(sub, ops)
    return function()
      local a = sub()
      while ops[peek()] do
        local op = ops[peek()]
        pos = pos + 1
        a = alg[op](a, sub())
      end
      return a
    end
  end
  local term = level(unary, { ["*"] = "mul", ["/"] = "div" })
  expr = level(term, { ["+"] = "add", ["-"] = "sub" })
  if #toks == 0 then bad("empty formula") end
  local r = expr()
  if pos <= #toks then bad('unexpected "%s"', toks[pos].t == "num" and toks[pos].v or toks[pos].t) end
  return r
end

------------------------------------------------------------ ranges (the checker)

-- Values are ranges {lo, hi}; `v` is the exact value of a constant. `names`
-- maps each name to its range.
function M.range(text, names, bad, name)
  local function ranged(lo, hi, v)
    lo, hi = lo + 0.0, hi + 0.0 -- floats: integers would wrap around
    if lo < -I64_BOUND or hi >= I64_BOUND then
      bad("may overflow 64 bits for some kernel size k in [%d, %d]", M.K_MIN, M.K_MAX)
    end
    return { lo = lo, hi = hi, v = v }
  end
  local alg = {
    num = function(n) return ranged(n, n, n) end,
    name = function(t) local r = names[t]; return ranged(r.lo, r.hi, r.v) end,
    neg = function(a) return ranged(-a.hi, -a.lo, a.v and -a.v) end,
    add = function(a, b) return ranged(a.lo + b.lo, a.hi + b.hi, a.v and b.v and a.v + b.v) end,
    sub = function(a, b) return ranged(a.lo - b.hi, a.hi - b.lo, a.v and b.v and a.v - b.v) end,
    mul = function(a, b)
      local p = { a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi }
      return ranged(math.min(p[1], p[2], p[3], p[4]), math.max(p[1], p[2], p[3], p[4]), a.v and b.v and a.v * b.v)
    end,
    div = function(a, b)
      if not b.v then bad("divide only by a constant (a divisor in k could be 0)") end
      if b.v == 0 then bad("division by zero (the divisor is 0 in C's integer arithmetic)") end
      local q1, q2 = a.lo / b.v, a.hi / b.v
      return ranged(math.min(q1, q2), math.max(q1, q2), a.v and M.cdiv(a.v, b.v))
    end,
  }
  return M.fold(M.tokens(text, bad, name), alg, bad)
end

------------------------------------------------------------ exact values

-- A formula compiled once to a function of its names' values.
local CLOSURES = {
  num = function(n) return function() return n end end,
  name = function(t) return function(env) return env[t] end end,
  neg = function(a) return function(env) return -a(env) end end,
  add = function(a, b) return function(env) return a(env) + b(env) end end,
  sub = function(a, b) return function(env) return a(env) - b(env) end end,
  mul = function(a, b) return function(env) return a(env) * b(env) end end,
  div = function(a, b) return function(env) return M.cdiv(a(env), b(env)) end end,
}

local compiled = {}

function M.eval(text, env)
  local f = compiled[text]
  if not f then
    local function bad(fmt, ...) error(string.format("bad formula %s: " .. fmt, text, ...), 0) end
    f = M.fold(M.tokens(text, bad), CLOSURES, bad)
    compiled[text] = f
  end
  return f(env)
end

------------------------------------------------------------ C emission

-- Every step parenthesised: the C reads as the formula folded, whatever C's
-- own precedence; numbers are int64_t so no step is done in int.
local function c_alg(name)
  return {
    num = function(n) return string.format("INT64_C(%d)", n) end,
    name = name,
    neg = function(a) return "(-" .. a .. ")" end,
    add = function(a, b) return "(" .. a .. " + " .. b .. ")" end,
    sub = function(a, b) return "(" .. a .. " - " .. b .. ")" end,
    mul = function(a, b) return "(" .. a .. " * " .. b .. ")" end,
    div = function(a, b) return "(" .. a .. " / " .. b .. ")" end,
  }
end

function M.c(text, name)
  local function bad(fmt, ...) error(string.format("bad formula %s: " .. fmt, text, ...), 0) end
  return M.fold(M.tokens(text, bad), c_alg(name), bad)
end

------------------------------------------------------------ C# emission

-- As the C: every step parenthesised, numbers long (C#'s "/" on long
-- truncates toward zero, as C's does on int64_t).
function M.cs(text, name)
  local function bad(fmt, ...) error(string.format("bad formula %s: " .. fmt, text, ...), 0) end
  local alg = c_alg(name)
  alg.num = function(n) return string.format("%dL", n) end
  return M.fold(M.tokens(text, bad), alg, bad)
end

-- The names a formula reads, sorted.
function M.names(text)
  local seen, list = {}, {}
  local function bad(fmt, ...) error(string.format("bad formula %s: " .. fmt, text, ...), 0) end
  for _, t in ipairs(M.tokens(text, bad)) do
    if t.t:match("^[%a_]") and not seen[t.t] then seen[t.t] = true; list[#list + 1] = t.t end
  end
  table.sort(list)
  return list
end

return M
