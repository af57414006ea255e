// ShapeIo.cs: how a layer maps shapes, as generated code states it from
// the schema's `io` (runtime/shape/shape_io.h); Shapes.cs is the one engine
// that applies it.
namespace Nnn
{
    /// <summary>How a layer maps shapes (nnn_io_kind_t).</summary>
    public enum IoKind
    {
        /// <summary>No io: nothing is known past this layer.</summary>
        Unknown,
        /// <summary>Dense: contracts the last axis (or all, flattened).</summary>
        Features,
        /// <summary>N-D sliding window over [batch, d1..dn, channels].</summary>
        Window,
        /// <summary>Output shape = input shape.</summary>
        Elementwise,
        /// <summary>[batch, product of the rest].</summary>
        Flatten,
        /// <summary>[batch, shape...], one entry may be -1.</summary>
        Reshape,
        /// <summary>A plugin's layer: its <see cref="Io.Infer"/> gives the shape.</summary>
        Plugin,
    }

    /// <summary>Where a value of the io came from, for messages (nnn_io_src_t).</summary>
    public struct IoSrc
    {
        /// <summary>The field's path relative to the layer ("weights.dims"); null or "" for the layer.</summary>
        public readonly string Path;
        /// <summary>The element of the field (-1: the field itself).</summary>
        public readonly long Index;
        /// <summary>The field's byte offset (-1: none).</summary>
        public readonly long At;

        /// <summary>A source: field <paramref name="path"/>, element <paramref name="index"/>, at <paramref name="at"/>.</summary>
        public IoSrc(string path, long index, long at)
        {
            Path = path;
            Index = index;
            At = at;
        }
    }

    /// <summary>A per-axis list of the io (window, stride, dilation, padding, shape):
    /// elements of an int32 array field, or one value for every axis (nnn_io_ints_t).</summary>
    public sealed class IoInts
    {
        /// <summary>No list, 0 for every axis (what the C's zeroed io holds).</summary>
        public static readonly IoInts None = new IoInts(false, null, 0, 0, 0, default(IoSrc));

        /// <summary>True: the values are <see cref="Count"/> elements of <see cref="Values"/> from
        /// <see cref="Base"/>; false: <see cref="All"/> for every axis.</summary>
        public bool IsList { get; }
        /// <summary>The whole field (may be null).</summary>
        public int[] Values { get; }
        /// <summary>The field's element that the list's first value is.</summary>
        public long Base { get; }
        /// <summary>How many values the list has.</summary>
        public int Count { get; }
        /// <summary>The value of every axis when not a list.</summary>
        public long All { get; }
        /// <summary>The whole field, for messages.</summary>
        public IoSrc Src { get; }

        IoInts(bool list, int[] values, long from, int count, long all, IoSrc src)
        {
            IsList = list;
            Values = values;
            Base = from;
            Count = count;
            All = all;
            Src = src;
        }

        /// <summary>Value <paramref name="j"/> of the list (0 &lt;= j &lt; Count), or <see cref="All"/>.</summary>
        public long this[int j] => IsList ? Values[Base + j] : All;

        /// <summary><paramref name="all"/> for every axis (from the field <paramref name="src"/>,
        /// for messages; none for a default).</summary>
        public static IoInts Every(long all, IoSrc src = default(IoSrc)) => new IoInts(false, null, 0, 0, all, src);

        /// <summary>Elements [from, to) of <paramref name="a"/>, counted from the end when negative
        /// (<paramref name="toEnd"/>: up to the end), of the field <paramref name="path"/> at
        /// <paramref name="at"/> (nnn_io_list).</summary>
        public static IoInts List(int[] a, long from, bool toEnd, long to, string path, long at)
        {
            long n = a == null ? 0 : a.Length;
            from = from < 0 ? from + n : from;
            to = toEnd ? n : to < 0 ? to + n : to;
            from = from < 0 ? 0 : from > n ? n : from;
            to = to < from ? from : to > n ? n : to;
            return new IoInts(true, a, from, (int)(to - from), 0, new IoSrc(path, -1, at));
        }
    }

    /// <summary>A plugin layer's shape rule: the output shape for an exact input shape, or null
    /// with <paramref name="message"/> saying why it does not take it ("" for the default).</summary>
    public delegate long[] InferFn(long[] input, out string message);

    /// <summary>How one layer maps shapes: the values of the fields its schema `io` names
    /// (nnn_io_t). A new Io is the C's zeroed one: <see cref="IoKind.Unknown"/>.</summary>
    public sealed class Io
    {
        /// <summary>The kind of mapping.</summary>
        public IoKind Kind { get; set; }
        /// <summary>The field that takes the input, blamed when it does not fit.</summary>
        public IoSrc InSrc { get; set; }
        /// <summary>Features: the contracted size; window, elementwise: the channels, -1 any.</summary>
        public long Inputs { get; set; }
        /// <summary>Features, window: the output's last axis; -1: the input's.</summary>
        public long Outputs { get; set; }
        /// <summary>Features: reshape to [batch, -1] first.</summary>
        public bool Flatten { get; set; }
        /// <summary>Window: the window sizes, one per spatial axis.</summary>
        public IoInts Window { get; set; } = IoInts.None;
        /// <summary>Window: the strides.</summary>
        public IoInts Stride { get; set; } = IoInts.None;
        /// <summary>Window: the dilations.</summary>
        public IoInts Dilation { get; set; } = IoInts.None;
        /// <summary>Window: [before1, after1, ...]; not a list: from <see cref="PadFn"/>, or none.</summary>
        public IoInts Pads { get; set; } = IoInts.None;
        /// <summary>Window: the padding type's formulas, or null.</summary>
        public PadFn PadFn { get; set; }
        /// <summary>Window: the padding type's value.</summary>
        public long PadType { get; set; }
        /// <summary>Reshape: the target dims.</summary>
        public IoInts Shape { get; set; } = IoInts.None;
        /// <summary>Plugin: the layer type's shape rule (a C# plugin type registers it); null: the
        /// layer takes no input shape, as libnnn says of a plugin without infer.</summary>
        public InferFn Infer { get; set; }
    }

    /// <summary>One spatial axis as a window kind's `shape` formulas name it (nnn_io_axis_t):
    /// the engine fills the inputs, then each result in the order the formulas read them.</summary>
    public sealed class IoAxis
    {
        /// <summary>The axis' size.</summary>
        public long S { get; set; }
        /// <summary>The padding before the axis.</summary>
        public long Before { get; set; }
        /// <summary>The padding after the axis.</summary>
        public long After { get; set; }
        /// <summary>The window size along the axis.</summary>
        public long Window { get; set; }
        /// <summary>The stride along the axis.</summary>
        public long Stride { get; set; }
        /// <summary>The dilation along the axis.</summary>
        public long Dilation { get; set; }
        /// <summary>Result: the dilated window (<c>Formulas.WindowK</c>).</summary>
        public long K { get; set; }
        /// <summary>Result: what is left past the window; &lt; 0: the axis is too small (<c>Formulas.WindowRoom</c>).</summary>
        public long Room { get; set; }
        /// <summary>Result: the output's size (<c>Formulas.WindowOut</c>).</summary>
        public long Out { get; set; }
    }
}
