-- A doc-only edit: the doc string of the first field of the first record.
local h = edit:at("records", 1, "fields", 1, "doc")
local doc = h:value() .. " (Reworded by a drill.)"
h:set(string.format("%q", doc))
var("DOC", doc)
