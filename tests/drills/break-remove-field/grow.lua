-- The first field that no rule, io, count or tag names is removed.
local u = assert(unreferenced()[1], "every field is named by a rule")
edit:at("records", u.record.name, "fields", u.field.name):remove()
expect(string.format('field removed: records "%s".fields[%d] "%s": ', u.record.name, u.index, u.field.name))
