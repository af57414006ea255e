// Shapes.cs: the one shape engine (runtime/shape/shape.c). Generated code
// turns each layer's schema `io` into an Io; this file is the only place
// that knows what the io kinds do to a shape, and where a kind's rule is a
// formula it calls the generated one (Formulas.Window*), keeping the checks
// and messages.
//
// A shape is followed partially known (PartialShape): with an input shape
// every dim is known until a layer does not fit; without one, each layer
// still fixes what its own fields say. Every product and sum is checked for
// 64-bit overflow.
using System;
using System.Text;

namespace Nnn
{
    /// <summary>A shape as far as it is known (nnn_pshape_t): -1 for what is not.</summary>
    public sealed class PartialShape
    {
        /// <summary>The most axes a shape has (NNN_MAX_RANK).</summary>
        public const int MaxRank = 32;

        internal readonly long[] D = new long[MaxRank];

        /// <summary>The number of axes, -1 when unknown.</summary>
        public int Rank { get; internal set; }
        /// <summary>The last axis (also when the rank is unknown), or -1.</summary>
        public long Last { get; internal set; }

        internal PartialShape(int rank, long last)
        {
            Rank = rank;
            Last = last;
        }

        /// <summary>The dims (-1 where unknown); empty when the rank is unknown.</summary>
        public long[] Dims
        {
            get
            {
                var d = new long[Math.Max(0, Math.Min(Rank, MaxRank))];
                Array.Copy(D, d, d.Length);
                return d;
            }
        }

        /// <summary>Every dim is known (nnn_pshape_exact).</summary>
        public bool IsExact
        {
            get
            {
                if (Rank < 1)
                    return false;
                for (int i = 0; i < Rank; i++)
                    if (D[i] < 0)
                        return false;
                return true;
            }
        }

        internal PartialShape Copy()
        {
            var c = new PartialShape(Rank, Last);
            Array.Copy(D, c.D, MaxRank);
            return c;
        }

        /// <summary>An exact shape as a partial one (nnn_pshape_of).</summary>
        internal static PartialShape Of(long[] s)
        {
            var p = new PartialShape(s.Length, s.Length > 0 ? s[s.Length - 1] : Chain.Unk);
            for (int i = 0; i < s.Length && i < MaxRank; i++)
                p.D[i] = s[i];
            return p;
        }

        /// <summary>"[?, 26, 26, 8]", or "[?, ..., 10]" and "[?, ...]" when the rank is unknown
        /// (nnn_pshape_format).</summary>
        public override string ToString()
        {
            if (Rank < 0)
                return Last >= 0 ? "[?, ..., " + CFormat.D(Last) + "]" : "[?, ...]";
            return ShapeText.Dims(D, Math.Min(Rank, MaxRank), 0, "?");
        }
    }

    /// <summary>A layer's input, as the previous layer gives it and this layer's own fields
    /// narrow it, and its output (nnn_layer_shapes_t).</summary>
    public sealed class LayerShapes
    {
        /// <summary>The input.</summary>
        public PartialShape In { get; }
        /// <summary>The output.</summary>
        public PartialShape Out { get; }

        internal LayerShapes(PartialShape input, PartialShape output)
        {
            In = input;
            Out = output;
        }
    }

    /// <summary>The one shape printer (shape.c's dims_put): "[1, 28, 28, 1]".</summary>
    static class ShapeText
    {
        /// <summary>The first <paramref name="n"/> of <paramref name="d"/>: at most
        /// <paramref name="most"/> shown (0: all), a dim &lt; 0 as <paramref name="unknown"/> when not null.</summary>
        internal static string Dims(long[] d, int n, int most, string unknown) => Put(i => d[i], n, most, unknown);

        internal static string Dims(int[] d, int n, int most, string unknown) => Put(i => d[i], n, most, unknown);

        static string Put(Func<int, long> d, int n, int most, string unknown)
        {
            var sb = new StringBuilder("[");
            for (int i = 0; i < n; i++)
            {
                if (most > 0 && i == most)
                {
                    sb.Append(", ...");
                    break;
                }
                if (i > 0)
                    sb.Append(", ");
                long x = d(i);
                sb.Append(x < 0 && unknown != null ? unknown : CFormat.D(x));
            }
            return sb.Append(']').ToString();
        }
    }

    /// <summary>The chain rule: consecutive layers agree on shapes; with an input shape,
    /// every output shape is inferred (shape.c's nnn_rule_chain).</summary>
    public static class Chain
    {
        internal const long Unk = -1; // NNN_DIM_UNKNOWN
        const long Overflow = -2;     // product(): more than 2^63 - 1

        /// <summary>Checks layers 0..n-1 (<paramref name="io"/>(i) gives layer i's io) from
        /// <paramref name="input"/> (null: what the layers fix of each other only), reporting through
        /// <paramref name="v"/> under <paramref name="name"/> ("layers"). <paramref name="broken"/>
        /// (may be null): layers whose own checks failed, whose shape is then unknown.
        /// <paramref name="outShapes"/> (may be null; n entries): each layer's exact output shape,
        /// null where it is not exact.</summary>
        public static void Check(Checker v, string name, int n, Func<int, Io> io, bool[] broken, long[] input,
                                 long[][] outShapes)
        {
            Run(v, name, n, io, broken, input, outShapes, null);
        }

        /// <summary>Every layer's input and output shape, as far as they are known, from
        /// <paramref name="input"/> (null: what the layers fix); problems go to <paramref name="v"/>
        /// (nnn_model_shapes: what nnnkit info shows).</summary>
        public static LayerShapes[] Shapes(Checker v, string name, int n, Func<int, Io> io, long[] input)
        {
            var all = new LayerShapes[n];
            Run(v, name, n, io, null, input, null, (i, s) => all[i] = s);
            return all;
        }

        /// <summary>The input the layers fix, with a batch of 1, when they fix all of it and the
        /// whole chain takes it; else null (nnn_model_fixed_input).</summary>
        public static long[] FixedInput(int n, Func<int, Io> io)
        {
            if (n < 1)
                return null;
            var v = new Checker();
            PartialShape p = null;
            Run(v, "layers", n, io, null, null, null, (i, s) => { if (i == 0) p = s.In; });
            if (v.Problems.Count > 0)
                return null;
            long[] input;
            if (p.Rank < 0) // its rank open, as a Dense layer's [batch, ..., features]
            {
                if (p.Last < 0)
                    return null;
                input = new long[] { 1, p.Last };
            }
            else
            {
                if (p.Rank < 1)
                    return null;
                input = new long[p.Rank];
                input[0] = 1;
                for (int k = 1; k < p.Rank; k++)
                    if ((input[k] = p.D[k]) < 0)
                        return null;
            }
            var w = new Checker(); // the engine decides: the whole chain must take it
            Run(w, "layers", n, io, null, input, null, null);
            return w.Problems.Count == 0 ? input : null;
        }

        static void Run(Checker v, string name, int n, Func<int, Io> io, bool[] broken, long[] input,
                        long[][] outShapes, Action<int, LayerShapes> each)
        {
            var c = new State { V = v, Name = name, From = -1, S = new PartialShape((int)Unk, Unk) };
            if (input != null)
            {
                if (input.Length < 2 || input.Length > PartialShape.MaxRank)
                {
                    v.Report(Status.E_INPUT_SHAPE, "", -1, "rank " + CFormat.D(input.Length) +
                             " given, expected [batch, ..., features]");
                    c.Broken = true;
                }
                else
                {
                    c.S = PartialShape.Of(input);
                    c.Given = Rules.Cut(ShapeText.Dims(input, input.Length, 0, null), 96);
                    for (int d = 0; d < input.Length; d++)
                    {
                        if (input[d] < 0)
                        {
                            v.Report(Status.E_INPUT_SHAPE, "", -1, "dim " + CFormat.D(d) +
                                     " of the input shape is negative (" + CFormat.D(input[d]) + "), expected >= 0");
                            c.Broken = true;
                            c.S.D[d] = Unk;
                        }
                    }
                }
            }
            for (int i = 0; i < n; i++)
            {
                c.I = i;
                Io x = io(i) ?? new Io();
                IoKind kind = broken != null && i < broken.Length && broken[i] ? IoKind.Unknown : x.Kind;
                PartialShape inShape = each != null ? c.S.Copy() : null;
                switch (kind)
                {
                case IoKind.Features:
                    Features(c, x);
                    break;
                case IoKind.Window:
                    Window(c, x);
                    break;
                case IoKind.Elementwise:
                    Elementwise(c, x);
                    break;
                case IoKind.Flatten:
                    Flatten(c);
                    break;
                case IoKind.Reshape:
                    Reshape(c, x);
                    break;
                case IoKind.Plugin:
                    Plugin(c, x);
                    break;
                default:
                    SetRankUnknown(c.S, Unk);
                    c.Broken = true;
                    break;
                }
                CheckSize(c, x);
                if (each != null)
                {
                    NarrowIn(inShape, x, kind);
                    each(i, new LayerShapes(inShape, c.S.Copy()));
                }
                if (outShapes != null && i < outShapes.Length) // exact only while every layer so far fitted
                    outShapes[i] = !c.Broken && c.S.IsExact ? c.S.Dims : null;
                c.From = i;
            }
        }

        sealed class State
        {
            internal Checker V;
            internal string Name;     // the layers' field, "layers"
            internal int I;           // the layer at hand
            internal int From;        // the layer that made the incoming shape; -1: the input
            internal bool Broken;     // a layer did not fit: no shape past it is exact
            internal PartialShape S;  // the shape at hand
            internal string Given = "";  // the input shape the caller gave, as text; "": none
            internal string After = "";  // said after the next problem's "(from ...)", once
        }

        /// <summary>Reports at layers[i].&lt;src path&gt;[index] (index -1: src's own element), as
        /// coming from the previous layer or the model's input.</summary>
        static void Say(State c, IoSrc src, long index, Status code, string msg)
        {
            int mark = c.V.Push(c.Name);
            long at = src.At;
            c.V.Index(c.I);
            if (!string.IsNullOrEmpty(src.Path))
                c.V.Push(src.Path);
            if (index < 0)
                index = src.Index;
            if (index >= 0)
            {
                c.V.Index(index);
                if (at >= 0)
                    at += 4 + 4 * index; // an int32 array: count, then elements
            }
            if (code == Status.E_CHAIN || code == Status.E_INPUT_SHAPE)
            {
                string rel = c.From >= 0 ? "layers[" + CFormat.D(c.From) + "]"
                           : c.Given.Length > 0 ? "the input shape " + Utf8.Cut(c.Given, 24) + " given"
                           : "the model's input";
                code = c.From < 0 ? Status.E_INPUT_SHAPE : Status.E_CHAIN;
                c.V.Report(code, "", at, Rules.Cut(msg, Problem.MessageMax + 1) + " (from " + rel + ")" + c.After);
                c.After = "";
            }
            else
            {
                c.V.Report(code, "", at, msg);
            }
            c.V.Pop(mark);
        }

        /// <summary>Given data whose axis 1, not its last, has the first layer's channels are most
        /// likely channels-first (PyTorch's [N, C, H, W]): the problem that follows says how to
        /// make them channels-last.</summary>
        static void ChannelsFirstHint(State c, long channels)
        {
            PartialShape s = c.S;
            if (c.From >= 0 || c.Given.Length == 0 || s.Rank < 3 || s.D[1] != channels || s.Last == channels)
                return;
            var sb = new StringBuilder("; it looks channels-first (axis 1 has the " + CFormat.D(channels) +
                                       " channels) and nnn takes channels-last [N, d.., C]: transpose the data " +
                                       "with x.transpose(0");
            for (int d = 2; d <= s.Rank; d++)
                sb.Append(", ").Append(CFormat.D(d < s.Rank ? d : 1));
            c.After = Rules.Cut(sb.Append(')').ToString(), 160);
        }

        /// <summary>After a layer that does not fit, shapes are partial: later layers are still
        /// checked against what earlier layers' own fields fix, so every disagreement is reported,
        /// but no shape past it is called exact.</summary>
        static void Misfit(State c) => c.Broken = true;

        static bool MulOk(long a, long b, out long r)
        {
            r = 0;
            if (a < 0 || b < 0 || (b != 0 && a > long.MaxValue / b))
                return false;
            r = a * b;
            return true;
        }

        /// <summary>Product of dims [from, rank) (Unk if one is unknown, Overflow past 2^63 - 1);
        /// <paramref name="known"/> gets the product of the known ones.</summary>
        static long Product(PartialShape s, int from, out long known)
        {
            long k = 1;
            bool unknown = false;
            known = 0;
            for (int d = from; d < s.Rank; d++)
            {
                if (s.D[d] < 0)
                {
                    unknown = true;
                    continue;
                }
                if (!MulOk(k, s.D[d], out k))
                    return Overflow;
            }
            known = k;
            return unknown ? Unk : k;
        }

        static void SetRankUnknown(PartialShape s, long last)
        {
            s.Rank = (int)Unk;
            s.Last = last;
        }

        static void Features(State c, Io io)
        {
            PartialShape s = c.S;
            if (io.Inputs < 1 || io.Outputs < 1) // the layer's own rules say why
            {
                Misfit(c);
                SetRankUnknown(s, Unk);
                return;
            }
            if (io.Flatten)
            {
                long known = 0, feat = s.Rank >= 0 ? Product(s, 1, out known) : Unk;
                if (feat == Overflow)
                {
                    Say(c, io.InSrc, -1, Status.E_INPUT_SHAPE, "the incoming shape flattens to more than 2^63 - 1 values");
                    Misfit(c);
                }
                else if (feat >= 0 && feat != io.Inputs)
                {
                    Say(c, io.InSrc, -1, Status.E_CHAIN, "found " + CFormat.D(io.Inputs) +
                            " inputs, but the incoming shape flattens to " + CFormat.D(feat));
                    Misfit(c);
                }
                else if (feat < 0 && s.Rank >= 0 && known > 0 && io.Inputs % known != 0)
                {
                    Say(c, io.InSrc, -1, Status.E_CHAIN, "found " + CFormat.D(io.Inputs) +
                            " inputs, expected a multiple of the " + CFormat.D(known) +
                            " values known of the shape it flattens");
                    Misfit(c);
                }
                else if (s.Rank < 0 && s.Last > 0 && io.Inputs % s.Last != 0)
                {
                    Say(c, io.InSrc, -1, Status.E_CHAIN, "found " + CFormat.D(io.Inputs) +
                            " inputs, expected a multiple of the " + CFormat.D(s.Last) + " channels it flattens");
                    Misfit(c);
                }
                long batch = s.Rank >= 1 ? s.D[0] : Unk;
                s.Rank = 2;
                s.D[0] = batch;
                s.D[1] = s.Last = io.Outputs;
                return;
            }
            if (s.Last >= 0 && s.Last != io.Inputs)
            {
                ChannelsFirstHint(c, io.Inputs);
                Say(c, io.InSrc, -1, Status.E_CHAIN, "found " + CFormat.D(io.Inputs) +
                        " inputs, but the incoming last axis has " + CFormat.D(s.Last));
                Misfit(c);
            }
            if (s.Rank >= 1)
                s.D[s.Rank - 1] = io.Outputs;
            s.Last = io.Outputs;
        }

        /// <summary>Checks a per-axis list has one entry per axis, each &gt;= min.</summary>
        static bool AxesOk(State c, string what, IoInts x, int n, long min)
        {
            if (x.IsList && x.Count != n)
            {
                Say(c, x.Src, -1, Status.E_SHAPE, "found " + CFormat.D(x.Count) + " " + what +
                        " values, expected " + CFormat.D(n) + " (one per spatial axis)");
                return false;
            }
            for (int j = 0; j < n; j++)
            {
                long e = x[j];
                if (e < min)
                {
                    Say(c, x.Src, x.IsList ? x.Base + j : -1, Status.E_SHAPE, what + " of axis " +
                            CFormat.D(j + 1) + " is " + CFormat.D(e) + ", expected >= " + CFormat.D(min));
                    return false;
                }
            }
            return true;
        }

        /// <summary>Padding of axis j for an effective window k, from the explicit list or the
        /// padding type's formulas; false for an unknown padding type.</summary>
        static bool PadOf(Io io, int j, long k, out long before, out long after)
        {
            if (io.Pads.IsList)
            {
                before = io.Pads[2 * j];
                after = io.Pads[2 * j + 1];
            }
            else if (io.PadFn != null)
            {
                return io.PadFn(io.PadType, k, out before, out after);
            }
            else
            {
                before = after = 0;
            }
            return true;
        }

        /// <summary>PadOf, checked: what does not fit is reported.</summary>
        static bool Padding(State c, Io io, int j, long k, out long before, out long after)
        {
            if (!PadOf(io, j, k, out before, out after))
                return false; // an unknown padding type: its enum reports it
            if (before < 0 || after < 0 || before > int.MaxValue || after > int.MaxValue)
            {
                Say(c, io.Pads.IsList ? io.Pads.Src : io.InSrc, io.Pads.IsList ? io.Pads.Base + 2 * j : -1,
                        Status.E_PADDING, "padding of axis " + CFormat.D(j + 1) + " is " + CFormat.D(before) +
                        " before and " + CFormat.D(after) + " after, expected 0 to " + CFormat.D(int.MaxValue) + " each");
                return false;
            }
            return true;
        }

        /// <summary>The output size of spatial axis j of size x (Unk: unknown, or it does not fit).
        /// The rule is the schema's (Formulas.Window*); this keeps each step within 64 bits and
        /// says why an axis does not fit.</summary>
        static long WindowAxis(State c, Io io, int j, long x)
        {
            var a = new IoAxis { S = x, Window = io.Window[j], Stride = io.Stride[j], Dilation = io.Dilation[j] };
            a.K = Formulas.WindowK(a); // window and dilation are int32: no overflow
            long before, after;
            bool ok = Padding(c, io, j, a.K, out before, out after);
            a.Before = before;
            a.After = after;
            if (!ok)
            {
                Misfit(c);
                return Unk;
            }
            if (x < 0)
                return Unk;
            if (x > long.MaxValue - a.Before - a.After)
            {
                Say(c, io.Window.Src, io.Window.Base + j, Status.E_INPUT_SHAPE, "axis " + CFormat.D(j + 1) +
                        " of size " + CFormat.D(x) + " is too large to pad");
                Misfit(c);
                return Unk;
            }
            a.Room = Formulas.WindowRoom(a);
            if (a.Room < 0)
            {
                Say(c, io.Window.Src, io.Window.Base + j, Status.E_CHAIN, "axis " + CFormat.D(j + 1) +
                        " of size " + CFormat.D(x) + " (padded by " + CFormat.D(a.Before) + " and " +
                        CFormat.D(a.After) + ") is smaller than " +
                        (a.Dilation > 1 ? "the dilated window" : "window size") + " " + CFormat.D(a.K));
                Misfit(c);
                return Unk;
            }
            return a.Out = Formulas.WindowOut(a);
        }

        static void Window(State c, Io io)
        {
            PartialShape s = c.S;
            int n = io.Window.Count;
            long outC = io.Outputs >= 0 ? io.Outputs : io.Inputs >= 0 ? io.Inputs : s.Last;
            bool ok = n >= 1 && n + 2 <= PartialShape.MaxRank && AxesOk(c, "window", io.Window, n, 1) &&
                      AxesOk(c, "stride", io.Stride, n, 1) && AxesOk(c, "dilation", io.Dilation, n, 1);
            if (ok && io.Pads.IsList && io.Pads.Count != 2 * n)
            {
                Say(c, io.Pads.Src, -1, Status.E_PADDING, "found " + CFormat.D(io.Pads.Count) +
                        " padding dims, expected " + CFormat.D(2 * n) + " (before and after each axis)");
                ok = false;
            }
            if (!ok) // the window's own fields are broken: nothing is known past it
            {
                Misfit(c);
                SetRankUnknown(s, io.Outputs);
                return;
            }
            if (s.Rank >= 0 && s.Rank != n + 2)
            {
                // A given shape one axis short is most often one sample without its batch axis
                // (28,28,1 for 1,28,28,1).
                bool noBatch = c.From < 0 && c.Given.Length > 0 && s.Rank == n + 1;
                Say(c, io.Window.Src, -1, Status.E_CHAIN, "a " + CFormat.D(n) + "-D window needs rank " +
                        CFormat.D(n + 2) + " input [batch, d1..d" + CFormat.D(n) + ", channels], found rank " +
                        CFormat.D(s.Rank) + (noBatch ? "; the first axis is the batch: give 1 before the others " +
                                             "for one sample" : ""));
                Misfit(c);
            }
            else if (io.Inputs >= 0 && s.Last >= 0 && s.Last != io.Inputs)
            {
                ChannelsFirstHint(c, io.Inputs);
                Say(c, io.InSrc, -1, Status.E_CHAIN, "found " + CFormat.D(io.Inputs) +
                        " channels, but the incoming last axis has " + CFormat.D(s.Last));
                Misfit(c);
            }
            if (s.Rank != n + 2) // the batch stays; the spatial axes are not known
            {
                s.D[0] = s.Rank >= 1 ? s.D[0] : Unk;
                s.Rank = n + 2;
                for (int d = 1; d < n + 1; d++)
                    s.D[d] = Unk;
            }
            for (int j = 0; j < n; j++)
                s.D[1 + j] = WindowAxis(c, io, j, s.D[1 + j]);
            s.D[n + 1] = s.Last = outC;
        }

        static void Elementwise(State c, Io io)
        {
            PartialShape s = c.S;
            if (io.Inputs >= 0 && s.Last >= 0 && s.Last != io.Inputs)
            {
                ChannelsFirstHint(c, io.Inputs);
                Say(c, io.InSrc, -1, Status.E_CHAIN, "found " + CFormat.D(io.Inputs) +
                        " channels, but the incoming last axis has " + CFormat.D(s.Last));
                Misfit(c);
            }
            if (io.Inputs >= 0)
            {
                s.Last = io.Inputs;
                if (s.Rank >= 1)
                    s.D[s.Rank - 1] = io.Inputs;
            }
        }

        static void Flatten(State c)
        {
            PartialShape s = c.S;
            long known, batch = s.Rank >= 1 ? s.D[0] : Unk, p = s.Rank >= 0 ? Product(s, 1, out known) : Unk;
            if (p == Overflow)
            {
                Say(c, new IoSrc("", -1, -1), -1, Status.E_INPUT_SHAPE,
                        "the incoming shape flattens to more than 2^63 - 1 values");
                Misfit(c);
                p = Unk;
            }
            s.Rank = 2;
            s.D[0] = batch;
            s.D[1] = s.Last = p;
        }

        static void Reshape(State c, Io io)
        {
            PartialShape s = c.S;
            IoInts sh = io.Shape;
            long unused, batch = s.Rank >= 1 ? s.D[0] : Unk, input = s.Rank >= 0 ? Product(s, 1, out unused) : Unk;
            long known = 1;
            int freeAt = -1;
            if (sh.Count < 1 || sh.Count + 1 > PartialShape.MaxRank)
            {
                Say(c, sh.Src, -1, Status.E_SHAPE, "found " + CFormat.D(sh.Count) + " target dims, expected 1 to " +
                        CFormat.D(PartialShape.MaxRank - 1));
                Misfit(c);
                SetRankUnknown(s, Unk);
                return;
            }
            for (int j = 0; j < sh.Count; j++)
            {
                if (sh[j] == -1 && freeAt < 0)
                {
                    freeAt = j;
                }
                else if (sh[j] < 1 || !MulOk(known, sh[j], out known))
                {
                    Say(c, sh.Src, sh.Base + j, Status.E_SHAPE, "target dim " + CFormat.D(sh[j]) +
                            ", expected >= 1 (or one -1)");
                    Misfit(c);
                    SetRankUnknown(s, Unk);
                    return;
                }
            }
            s.Rank = sh.Count + 1;
            s.D[0] = batch;
            for (int j = 0; j < sh.Count; j++)
                s.D[1 + j] = sh[j];
            if (input >= 0 && (freeAt >= 0 ? input % known != 0 : input != known))
            {
                Say(c, sh.Src, -1, Status.E_CHAIN, CFormat.D(input) + " values per item cannot be reshaped to " +
                        (freeAt >= 0 ? "a multiple of " : "") + CFormat.D(known));
                Misfit(c);
                if (freeAt >= 0)
                    s.D[1 + freeAt] = Unk;
            }
            else if (freeAt >= 0)
            {
                s.D[1 + freeAt] = input >= 0 ? input / known : Unk;
            }
            s.Last = s.D[s.Rank - 1];
        }

        static void Plugin(State c, Io io)
        {
            if (!c.S.IsExact) // a plugin's infer needs the whole shape
            {
                SetRankUnknown(c.S, Unk);
                return;
            }
            string msg = "";
            long[] output = io.Infer != null ? io.Infer(c.S.Dims, out msg) : null;
            if (output != null && output.Length >= 1 && output.Length <= PartialShape.MaxRank)
            {
                c.S = PartialShape.Of(output);
                return;
            }
            Say(c, io.InSrc, -1, Status.E_CHAIN, !string.IsNullOrEmpty(msg) ? msg : "the layer rejects its input shape");
            Misfit(c);
            SetRankUnknown(c.S, Unk);
        }

        /// <summary>Refuses an output of more than 2^63 - 1 elements (the batch included).</summary>
        static void CheckSize(State c, Io io)
        {
            long known;
            if (c.S.Rank >= 0 && Product(c.S, 0, out known) == Overflow)
            {
                Say(c, io.InSrc, -1, Status.E_INPUT_SHAPE, "the output " + Rules.Cut(c.S.ToString(), 256) +
                        " would have more than 2^63 - 1 elements");
                Misfit(c);
                SetRankUnknown(c.S, c.S.Last);
            }
        }

        /// <summary>What a layer's own fields say of its input, added to what is known of it (for
        /// display: a Dense takes [?, ..., inputs]).</summary>
        static void NarrowIn(PartialShape input, Io io, IoKind kind)
        {
            long last = kind == IoKind.Features && !io.Flatten ? io.Inputs
                      : kind == IoKind.Window || kind == IoKind.Elementwise ? io.Inputs : Unk;
            int n = io.Window.Count;
            if (kind == IoKind.Window && input.Rank < 0 && n >= 1 && n + 2 <= PartialShape.MaxRank)
            {
                input.Rank = n + 2;
                for (int d = 0; d < input.Rank; d++)
                    input.D[d] = Unk;
                input.D[input.Rank - 1] = input.Last;
            }
            if (last < 1 || input.Last >= 0)
                return;
            input.Last = last;
            if (input.Rank >= 1)
                input.D[input.Rank - 1] = last;
        }
    }
}
