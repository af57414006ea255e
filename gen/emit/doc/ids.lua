-- ids (docs): the ID policy of an enum open to plugins, as the references
-- show it (a table of ranges, and the IDs third parties hold).

local ids = require("lock.ids")

local M = {}

-- The policy in docs/format.md, under its enum. w writes a line; cell
-- escapes table cells.
function M.doc(w, e, cell)
  local P = e.ids
  if not P then return end
  w("Who may use which %s (the ID policy, `ids.%s` in the schema): %s", ids.id_word(e.name), e.name, P.doc)
  w("")
  w("| %ss | who | meaning |", ids.id_word(e.name))
  w("|---|---|---|")
  for _, kind in ipairs(ids.KINDS) do
    if P[kind] then w("| %s | %s | %s |", ids.range_text(P[kind]), ids.WORDS[kind], cell(P[kind].doc)) end
  end
  w("")
  if #(P.taken or {}) > 0 then
    w("Taken by third parties (a core value never uses these IDs, nor their names):")
    w("")
    w("| %s | held by | as | why |", ids.id_word(e.name))
    w("|---|---|---|---|")
    for _, t in ipairs(P.taken) do
      w("| %d | %s | `%s` | %s |", t.id, cell(t.by), t.name, cell(t.doc))
    end
    w("")
  end
end

return M
