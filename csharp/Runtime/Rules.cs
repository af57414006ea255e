// Rules.cs: the rule kinds a schema can name (runtime/codec/rules.c and the
// tensor scan of runtime/codec/finite.c), which generated validators call.
// Each reports every problem it finds, with libnnn's code, path, offset and
// message, and never stops the validation.
using System;
using System.Text;

namespace Nnn
{
    /// <summary>The bounds of a "range" rule (enum nnn_bound): which it has, and which
    /// of those exclude their own value.</summary>
    [Flags]
    public enum Bound
    {
        /// <summary>No bound: only NaN fails.</summary>
        None = 0,
        /// <summary>value &gt;= min.</summary>
        Min = 1,
        /// <summary>value &lt;= max.</summary>
        Max = 2,
        /// <summary>With <see cref="Min"/>: value &gt; min.</summary>
        MinOpen = 4,
        /// <summary>With <see cref="Max"/>: value &lt; max.</summary>
        MaxOpen = 8,
    }

    /// <summary>The kind of an entry of a "dims" rule's pattern (nnn_pat_kind_t).</summary>
    public enum PatKind
    {
        /// <summary>Equals a field's value.</summary>
        Eq,
        /// <summary>"*": &gt;= 0.</summary>
        Any,
        /// <summary>"+": &gt;= 1.</summary>
        Pos,
        /// <summary>"+...": one or more dims, each &gt;= 1.</summary>
        PosMany,
    }

    /// <summary>An entry of a "dims" rule's pattern (nnn_pat_t).</summary>
    public struct Pat
    {
        /// <summary>What the dim must be.</summary>
        public PatKind Kind;
        /// <summary>The value it must equal (<see cref="PatKind.Eq"/>).</summary>
        public long Value;
        /// <summary>The field that value comes from, for messages (<see cref="PatKind.Eq"/>).</summary>
        public string Name;

        /// <summary>An entry of kind <paramref name="kind"/>.</summary>
        public Pat(PatKind kind, long value = 0, string name = null)
        {
            Kind = kind;
            Value = value;
            Name = name;
        }
    }

    /// <summary>The padding formulas of a padding type (generated from the schema):
    /// false for a value that has none.</summary>
    public delegate bool PadFn(long type, long k, out long before, out long after);

    /// <summary>The rule kinds generated validators call.</summary>
    public static class Rules
    {
        /// <summary>How many non-finite values of a tensor are listed one by one
        /// (NNN_FINITE_SHOWN); the rest are counted.</summary>
        public const int FiniteShown = 4;

        /// <summary>value &gt;= min.</summary>
        public static void Min(Checker v, string name, long value, long min, long at)
        {
            if (value < min)
                v.Report(Status.E_RANGE, name, at, "found " + CFormat.D(value) + ", expected >= " + CFormat.D(min));
        }

        /// <summary>value within the bounds <paramref name="flags"/> names (min or max is
        /// ignored without its flag); NaN always fails.</summary>
        public static void Bounds(Checker v, string name, double value, double min, double max, Bound flags, long at)
        {
            bool hasMin = (flags & Bound.Min) != 0, hasMax = (flags & Bound.Max) != 0;
            bool minOpen = (flags & Bound.MinOpen) != 0, maxOpen = (flags & Bound.MaxOpen) != 0;
            // Every comparison with NaN is false, and NaN fails without bounds too.
            bool ok = !double.IsNaN(value) && (!hasMin || (minOpen ? value > min : value >= min)) &&
                      (!hasMax || (maxOpen ? value < max : value <= max));
            if (ok)
                return;
            string found = "found " + CFormat.G(value, 9) + ", expected ";
            if (hasMin && hasMax)
                v.Report(Status.E_RANGE, name, at, found + "in " + (minOpen ? "(" : "[") + CFormat.G(min) + ", " +
                         CFormat.G(max) + (maxOpen ? ")" : "]"));
            else if (hasMin)
                v.Report(Status.E_RANGE, name, at, found + (minOpen ? ">" : ">=") + " " + CFormat.G(min));
            else if (hasMax)
                v.Report(Status.E_RANGE, name, at, found + (maxOpen ? "<" : "<=") + " " + CFormat.G(max));
            else
                v.Report(Status.E_RANGE, name, at, found + "a number");
        }

        /// <summary>value is neither NaN nor infinite.</summary>
        public static void Finite(Checker v, string name, float value, long at)
        {
            if (float.IsNaN(value) || float.IsInfinity(value))
                v.Report(Status.E_RANGE, name, at, "found " + CFormat.G(value) + ", expected a finite number");
        }

        /// <summary>Array field <paramref name="name"/> (at <paramref name="at"/>, its count
        /// first): its entries are checked against <paramref name="pat"/>.</summary>
        public static void Dims(Checker v, string name, int[] dims, long at, Pat[] pat)
        {
            dims = dims ?? new int[0];
            int npat = pat.Length, many = npat, fixedN = npat; // many: the "+..." entry, npat when none
            for (int i = 0; i < npat; i++)
                if (pat[i].Kind == PatKind.PosMany)
                {
                    many = i;
                    fixedN = npat - 1;
                }
            if (many == npat ? dims.Length != fixedN : dims.Length < fixedN + 1)
            {
                v.Report(Status.E_SHAPE, name, at, "found " + CFormat.D(dims.Length) + " dims " + DimsText(dims) +
                         ", expected " + (many == npat ? "" : "at least ") +
                         CFormat.D(many == npat ? fixedN : fixedN + 1) + ": " + PatText(pat));
                return;
            }
            int tail = many == npat ? 0 : dims.Length - fixedN; // dims covered by "+..."
            for (int d = 0, p = 0; d < dims.Length; d++)
            {
                Pat e = pat[p];
                long x = dims[d];
                int mark = v.Push(name);
                v.Index(d);
                long dat = Element(at, d);
                if (e.Kind == PatKind.Eq && x != e.Value)
                    v.Report(Status.E_SHAPE, "", dat, "found " + CFormat.D(x) + ", expected " + e.Name + " = " +
                             CFormat.D(e.Value));
                else if (e.Kind == PatKind.Any && x < 0)
                    v.Report(Status.E_SHAPE, "", dat, "found " + CFormat.D(x) + ", expected >= 0");
                else if ((e.Kind == PatKind.Pos || e.Kind == PatKind.PosMany) && x < 1)
                    v.Report(Status.E_SHAPE, "", dat, "found " + CFormat.D(x) + ", expected >= 1");
                v.Pop(mark);
                if (p == many && --tail > 0)
                    continue;
                p++;
            }
        }

        /// <summary>Exactly 2n padding dims for n spatial kernel axes (kernel dims
        /// [filters, k1..kn, channels]), each what the padding type's
        /// <paramref name="formulas"/> give for its kernel size.</summary>
        public static void Padding(Checker v, string name, int[] pads, long padsAt, int[] kernelDims, long type,
                                   PadFn formulas)
        {
            pads = pads ?? new int[0];
            long n = (kernelDims == null ? 0 : kernelDims.Length) - 2;
            if (n < 1)
                return; // the kernels' rank is reported by their dims rule
            // The count holds whatever the type: shapes are inferred from it.
            if (pads.Length != 2 * n)
            {
                v.Report(Status.E_PADDING, name, padsAt, "found " + CFormat.D(pads.Length) + " padding dims " +
                         DimsText(pads) + ", expected " + CFormat.D(2 * n) + " (before and after for each of the " +
                         CFormat.D(n) + " spatial axes)");
                return;
            }
            for (long j = 0; j < n; j++)
            {
                long k = kernelDims[1 + j], before, after;
                if (k < 1 || !formulas(type, k, out before, out after))
                    continue;
                for (int side = 0; side < 2; side++)
                {
                    long want = side == 1 ? after : before, found = pads[2 * j + side];
                    if (found == want)
                        continue;
                    int mark = v.Push(name);
                    v.Index(2 * j + side);
                    v.Report(Status.E_PADDING, "", Element(padsAt, 2 * j + side), "found " + CFormat.D(found) +
                             ", expected " + CFormat.D(want) + " (" + (side == 1 ? "after" : "before") + " of axis " +
                             CFormat.D(j + 1) + " for kernel size " + CFormat.D(k) + ")");
                    v.Pop(mark);
                }
            }
        }

        /// <summary>The header's parameter count equals what the tensors hold.</summary>
        public static void ParamCount(Checker v, string name, ulong found, ulong total, long at)
        {
            if (found != total)
                v.Report(Status.E_PARAM_COUNT, name, at, "found " + CFormat.U(found) +
                         ", but the parameter tensors hold " + CFormat.U(total) + " values");
        }

        /// <summary>The one check that reads tensor data (finite.c): every NaN and infinity of
        /// float array <paramref name="name"/> (its count at <paramref name="at"/>, 0 or less for
        /// none), the first <see cref="FiniteShown"/> by element, then the counts when there
        /// are more. Returns how many values are not finite.</summary>
        public static ulong FiniteData(Checker v, string name, float[] data, long at)
        {
            ulong nan = 0, pinf = 0, ninf = 0;
            int n = data == null ? 0 : data.Length;
            for (int i = 0; i < n; i++)
            {
                float x = data[i];
                if (!float.IsNaN(x) && !float.IsInfinity(x))
                    continue;
                uint w = BitConverter.ToUInt32(BitConverter.GetBytes(x), 0);
                bool isNan = (w & 0x007fffffu) != 0;
                if (nan + pinf + ninf < FiniteShown)
                {
                    int mark = v.Push(name);
                    v.Index(i);
                    v.Report(Status.E_RANGE, "", at > 0 ? at + 4 + 4L * i : -1, "found " +
                             (isNan ? "NaN" : w >> 31 != 0 ? "-inf" : "+inf") + " (bits 0x" + CFormat.X(w, 8) +
                             "), expected a finite number");
                    v.Pop(mark);
                }
                if (isNan)
                    nan++;
                else if (w >> 31 != 0)
                    ninf++;
                else
                    pinf++;
            }
            ulong total = nan + pinf + ninf;
            if (total > FiniteShown)
                v.Report(Status.E_RANGE, name, at > 0 ? at : -1, CFormat.U(total) + " of " + CFormat.D(n) +
                         " values are not finite (" + CFormat.U(nan) + " NaN, " + CFormat.U(pinf) + " +inf, " +
                         CFormat.U(ninf) + " -inf); the first " + CFormat.D(FiniteShown) + " are listed above");
            return total;
        }

        /// <summary>Element <paramref name="i"/> of <paramref name="a"/>, counted from the end when
        /// negative; -1 when there is none (nnn_i32s_pick).</summary>
        public static long Pick(int[] a, long i)
        {
            int n = a == null ? 0 : a.Length;
            if (i < 0)
                i += n;
            return i >= 0 && i < n ? a[i] : -1;
        }

        /// <summary>The file offset of element <paramref name="i"/> (from the end when negative) of
        /// an int32 array field at <paramref name="at"/>; the first element's when there is no such
        /// element (nnn_i32s_pick_at).</summary>
        public static long PickAt(int[] a, long at, long i)
        {
            if (i < 0)
                i += a == null ? 0 : a.Length;
            return Element(at, i < 0 ? 0 : i);
        }

        /// <summary>Index <paramref name="i"/> counted from the end when negative (nnn_i32s_resolve).</summary>
        public static long Resolve(int[] a, long i) => i < 0 ? i + (a == null ? 0 : a.Length) : i;

        /// <summary>The offset of element <paramref name="i"/> of an int32 array field at
        /// <paramref name="at"/> (its count, then the elements); none stays none.</summary>
        internal static long Element(long at, long i) => at < 0 ? -1 : at + 4 + 4 * i;

        /// <summary>"[10, 256]" (at most 16 dims shown), cut as libnnn's 160-byte buffer cuts it.</summary>
        static string DimsText(int[] d) => Cut(ShapeText.Dims(d, d.Length, 16, null), 160);

        /// <summary>A pattern as the messages say it: "[filters = 8, one or more >= 1, >= 1]".</summary>
        static string PatText(Pat[] pat)
        {
            var sb = new StringBuilder("[");
            for (int i = 0; i < pat.Length; i++)
            {
                if (i > 0)
                    sb.Append(", ");
                switch (pat[i].Kind)
                {
                case PatKind.Eq:
                    sb.Append(pat[i].Name ?? "(null)").Append(" = ").Append(CFormat.D(pat[i].Value));
                    break;
                case PatKind.Any:
                    sb.Append(">= 0");
                    break;
                case PatKind.Pos:
                    sb.Append(">= 1");
                    break;
                case PatKind.PosMany:
                    sb.Append("one or more >= 1");
                    break;
                }
            }
            return Cut(sb.Append(']').ToString(), 160);
        }

        /// <summary><paramref name="s"/> as a C buffer of <paramref name="size"/> bytes holds it.</summary>
        internal static string Cut(string s, int size) => Utf8.Cut(s, size - 1);
    }
}
