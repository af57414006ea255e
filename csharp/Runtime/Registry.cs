// Registry.cs: the plugin types a C# program knows (IDs outside the core
// schema), registered by generated plugin files (nnngen --plugin FRAGMENT
// --lang cs: <Name>Plugin.Register(registry)) instead of loaded with dlopen.
// The decoder asks it about an ID its schema lacks; with no type for the ID,
// the decoder gives libnnn's E_UNKNOWN_ID error and remedy.
using System;
using System.Collections.Generic;
using System.Text;

namespace Nnn
{
    /// <summary>One layer type or activation a plugin provides: its ID and what the codec
    /// does with an element of it. Filled by generated plugin code.</summary>
    public sealed class PluginType
    {
        /// <summary>A layer type or an activation.</summary>
        public ExtKind Kind { get; set; }
        /// <summary>Its ID (a layer ID or an activation ID).</summary>
        public long Id { get; set; }
        /// <summary>Its name in the fragment ("maxpool").</summary>
        public string Name { get; set; }
        /// <summary>Its title ("MaxPool").</summary>
        public string Title { get; set; }
        /// <summary>The plugin that provides it ("poolswish").</summary>
        public string Plugin { get; set; }
        /// <summary>Reads the element's fields (its body or parameters) at the cursor.</summary>
        public Func<Cursor, object> Decode { get; set; }
        /// <summary>Writes the element's fields.</summary>
        public Action<Sink, object> Encode { get; set; }
        /// <summary>The encoded size of the element's fields, in bytes.</summary>
        public Func<object, ulong> Size { get; set; }
        /// <summary>The number of parameter values in the element's tensors (null: none).</summary>
        public Func<object, ulong> Params { get; set; }
        /// <summary>Checks the element's rules: (checker, the layer or activation holding it, its
        /// fields); null: nothing to check.</summary>
        public Action<Checker, object, object> Validate { get; set; }
        /// <summary>A layer type's shape mapping: fills the io of (the layer holding it, its fields);
        /// null: its shape is not known, and the chain is not checked past it.</summary>
        public Action<object, object, Io> Io { get; set; }
    }

    /// <summary>The plugin types a program provides, by kind and ID.</summary>
    public sealed class Registry
    {
        readonly Dictionary<long, PluginType> layers = new Dictionary<long, PluginType>();
        readonly Dictionary<long, PluginType> activations = new Dictionary<long, PluginType>();
        readonly List<string> plugins = new List<string>();

        /// <summary>Adds <paramref name="type"/>; an ID another type holds already is refused
        /// (E_PLUGIN), as libnnn refuses two plugins that provide the same ID.</summary>
        public void Add(PluginType type)
        {
            var map = type.Kind == ExtKind.Layer ? layers : activations;
            PluginType old;
            if (map.TryGetValue(type.Id, out old))
                throw new NnnException(Status.E_PLUGIN, string.Format(
                    "{0} ID {1} of plugin {2} ({3}) is provided already, by plugin {4} ({5})",
                    type.Kind == ExtKind.Layer ? "layer" : "activation", type.Id, type.Plugin, type.Name,
                    old.Plugin, old.Name));
            map.Add(type.Id, type);
            if (!plugins.Contains(type.Plugin))
                plugins.Add(type.Plugin);
        }

        /// <summary>The type that provides ID <paramref name="id"/> of kind <paramref name="kind"/>, or null.</summary>
        public PluginType Find(ExtKind kind, long id)
        {
            PluginType t;
            return (kind == ExtKind.Layer ? layers : activations).TryGetValue(id, out t) ? t : null;
        }

        /// <summary>The plugins registered, for the unknown-ID message: "none", or their names.</summary>
        public string Names()
        {
            if (plugins.Count == 0)
                return "none";
            var b = new StringBuilder();
            foreach (string p in plugins)
                b.Append(b.Length > 0 ? ", " : "").Append(p).Append(" (registered)");
            return b.ToString();
        }
    }
}
