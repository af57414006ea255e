-- markdown: schema text made safe where the rendered references put it.

local M = {}

-- Text in a table cell: "|" would end the cell. (The checker keeps schema
-- text to one line.)
function M.cell(s)
  return (s:gsub("|", "\\|"))
end

-- Text in an HTML comment, which "--" would end.
function M.html_comment(s)
  while s:find("--", 1, true) do s = s:gsub("%-%-", "- -") end
  return s
end

return M
