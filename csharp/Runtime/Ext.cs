// Ext.cs: what the generated codec does with an element whose type a
// plugin provides (a port of runtime/codec/ext.c): each call forwards to
// the PluginType the registry gave the decoder for that ID.
namespace Nnn
{
    /// <summary>Calls generated code makes for an ID the schema does not define.</summary>
    public static class Ext
    {
        /// <summary>Writes an element of plugin type <paramref name="type"/>.</summary>
        public static void Encode(Sink w, PluginType type, object body)
        {
            if (type == null || body == null)
                throw Sink.Fail(Status.E_UNKNOWN_ID, "", "a plugin type without its fields");
            type.Encode(w, body);
        }

        /// <summary>The encoded size of an element of plugin type <paramref name="type"/> (0 without one).</summary>
        public static ulong Size(PluginType type, object body)
        {
            return type == null || body == null ? 0 : type.Size(body);
        }

        /// <summary>The parameter values of a layer of plugin type <paramref name="type"/>.</summary>
        public static ulong Params(PluginType type, object body)
        {
            return type == null || body == null || type.Params == null ? 0 : type.Params(body);
        }

        /// <summary>Checks an element of plugin type <paramref name="type"/>, held by <paramref name="owner"/>.</summary>
        public static void Check(Checker v, PluginType type, object owner, object body)
        {
            if (type != null && body != null && type.Validate != null)
                type.Validate(v, owner, body);
        }

        /// <summary>The shape mapping of a layer of plugin type <paramref name="type"/>: its type's, or
        /// none (IoKind.Unknown: the chain is not checked past it).</summary>
        public static void Io(PluginType type, object owner, object body, Io io)
        {
            if (type != null && body != null && type.Kind == ExtKind.Layer && type.Io != null)
                type.Io(owner, body, io);
        }

        /// <summary>The title of plugin type <paramref name="type"/> (its name without one); null without a type.</summary>
        public static string Title(PluginType type)
        {
            if (type == null)
                return null;
            return string.IsNullOrEmpty(type.Title) ? type.Name : type.Title;
        }
    }

    /// <summary>Who may allocate an ID of an enum open to plugins (the schema's ID policy).</summary>
    public enum IdRange
    {
        /// <summary>The schema's own values, now or in a later version.</summary>
        Core,
        /// <summary>Plugins' values, chosen without asking.</summary>
        ThirdParty,
        /// <summary>Nobody's.</summary>
        Never,
    }
}
