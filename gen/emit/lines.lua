-- lines: a builder of generated text, a line a call: w(fmt, ...) adds a
-- line (formatted when given arguments), w.text() returns them, each ended
-- by a newline.

local function lines()
  local t = {}
  return setmetatable({}, {
    __call = function(_, fmt, ...) t[#t + 1] = select("#", ...) > 0 and string.format(fmt, ...) or fmt end,
    __index = { text = function() return table.concat(t, "\n") .. "\n" end },
  })
end

return lines
