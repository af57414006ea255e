// Cursor.cs: the only code that reads file bytes (a port of
// runtime/codec/cursor.c). Generated decoders are built on these readers
// alone, so every bound check lives here: every read checks the bytes left
// first, and every count is checked against the bytes left before anything
// is allocated, so a hostile file costs at most a small multiple of its
// own size. Problems carry libnnn's codes, paths, offsets and messages.
using System;
using System.Collections.Generic;

namespace Nnn
{
    /// <summary>The kinds of ID a plugin can provide.</summary>
    public enum ExtKind
    {
        /// <summary>A layer type (a layer ID).</summary>
        Layer,
        /// <summary>An activation (an activation ID).</summary>
        Activation,
    }

    /// <summary>A reader of a .nnn file's bytes, little-endian, with the path of the field being read.</summary>
    public sealed class Cursor
    {
        readonly byte[] buf;
        readonly int len;
        int pos;
        readonly Checker path = new Checker();

        /// <summary>A cursor at the start of <paramref name="bytes"/>; <paramref name="registry"/>
        /// (may be null) provides the IDs the schema lacks.</summary>
        public Cursor(byte[] bytes, Registry registry = null)
        {
            buf = bytes ?? throw new ArgumentNullException(nameof(bytes));
            len = bytes.Length;
            Registry = registry;
        }

        /// <summary>Whom to ask about an ID the schema does not define (null: nobody).</summary>
        public Registry Registry { get; }

        /// <summary>Whether a problem that leaves the framing intact is recorded in
        /// <see cref="Problems"/> and decoding goes on (libnnn's NNN_DECODE_KEEP_GOING), instead of
        /// being thrown.</summary>
        public bool KeepGoing { get; set; }

        /// <summary>The problems kept going past (with <see cref="KeepGoing"/>), in order.</summary>
        public List<Problem> Problems => path.Problems;

        /// <summary>The offset of the next byte to read.</summary>
        public long Pos => pos;

        /// <summary>The bytes left after <see cref="Pos"/>.</summary>
        public long Left => len - pos;

        /// <summary>Enters field <paramref name="name"/>; returns the mark <see cref="Pop"/> takes.</summary>
        public int Push(string name) => path.Push(name);

        /// <summary>Enters element <paramref name="i"/> of the current field.</summary>
        public int Index(long i) => path.Index(i);

        /// <summary>Returns to the path as it was at <paramref name="mark"/>.</summary>
        public void Pop(int mark) => path.Pop(mark);

        // ---- problems

        /// <summary>A fatal problem at the current path: thrown, decoding stops.</summary>
        public NnnException Fail(Status code, long at, string message)
        {
            return new NnnException(new Problem(code, path.Path, at, message));
        }

        /// <summary>A problem that leaves the framing intact: recorded when <see cref="KeepGoing"/>,
        /// else thrown.</summary>
        public void Soft(Status code, long at, string message)
        {
            if (!KeepGoing)
                throw Fail(code, at, message);
            path.Report(code, "", at, message);
        }

        static string D(long v) => CFormat.D(v);

        // ---- readers: each pushes its field's name, checks the bytes, reads, pops

        void Need(int n, string what)
        {
            if (len - pos >= n)
                return;
            throw Fail(Status.E_TRUNCATED, pos, what + " needs " + D(n) + " bytes, found " + D(len - pos));
        }

        int Begin(string name, int n, string what, out long at)
        {
            int mark = path.Push(name);
            at = pos;
            Need(n, what);
            return mark;
        }

        uint Le32(int p) => (uint)(buf[p] | buf[p + 1] << 8 | buf[p + 2] << 16 | buf[p + 3] << 24);

        ulong LeBits(int p, int width)
        {
            ulong u = 0;
            for (int i = 0; i < width; i++)
                u |= (ulong)buf[p + i] << (8 * i);
            return u;
        }

        /// <summary>Reads u8 field <paramref name="name"/>; its offset goes to <paramref name="at"/>.</summary>
        public byte ReadU8(string name, out long at)
        {
            int mark = Begin(name, 1, "u8", out at);
            byte v = buf[pos++];
            path.Pop(mark);
            return v;
        }

        /// <summary>Reads i32 field <paramref name="name"/>.</summary>
        public int ReadI32(string name, out long at)
        {
            int mark = Begin(name, 4, "int32", out at);
            int v = (int)Le32(pos);
            pos += 4;
            path.Pop(mark);
            return v;
        }

        /// <summary>Reads u64 field <paramref name="name"/>.</summary>
        public ulong ReadU64(string name, out long at)
        {
            int mark = Begin(name, 8, "uint64", out at);
            ulong v = LeBits(pos, 8);
            pos += 8;
            path.Pop(mark);
            return v;
        }

        /// <summary>Reads f32 field <paramref name="name"/>, every bit pattern kept.</summary>
        public float ReadF32(string name, out long at)
        {
            int mark = Begin(name, 4, "float32", out at);
            float v = Bits.ToSingle(buf, pos);
            pos += 4;
            path.Pop(mark);
            return v;
        }

        /// <summary>Reads bool field <paramref name="name"/>: a byte other than 0 or 1 is E_BOOL.</summary>
        public bool ReadBool(string name, out long at)
        {
            int mark = Begin(name, 1, "bool", out at);
            byte b = buf[pos++];
            if (b > 1)
                Soft(Status.E_BOOL, at, "found " + D(b) + ", expected 0 or 1");
            path.Pop(mark);
            return b != 0;
        }

        /// <summary>Reads a scalar of an element type without a named reader (<paramref name="what"/>:
        /// its name in messages, "int8"), <paramref name="width"/> bytes, as raw little-endian bits.</summary>
        public ulong ReadNum(string name, string what, int width, out long at)
        {
            int mark = Begin(name, width, what, out at);
            ulong v = LeBits(pos, width);
            pos += width;
            path.Pop(mark);
            return v;
        }

        // Reads an i32 count of elem-byte elements and checks it against the
        // bytes left; leaves the cursor on the first element.
        int Count(int elem, string what)
        {
            long at = pos;
            Need(4, "count");
            int n = (int)Le32(pos);
            if (n < 0)
                throw Fail(Status.E_COUNT_NEGATIVE, at, what + " count is " + D(n) + ", expected >= 0");
            pos += 4;
            // Checked before anything is allocated: a 30-byte file cannot claim 2^31 floats.
            if ((long)n * elem > len - pos)
            {
                string left = D(len - pos);
                pos -= 4;
                throw Fail(Status.E_TRUNCATED, at, elem == 1
                    ? "found " + D(n) + " bytes, but only " + left + " remain"
                    : "found " + D(n) + " " + what + "s (" + D((long)n * elem) + " bytes), but only " + left +
                      " bytes remain");
            }
            return n;
        }

        /// <summary>Reads string field <paramref name="name"/>: an i32 length, then strict UTF-8.</summary>
        public string ReadString(string name, out long at)
        {
            int mark = Begin(name, 0, "string", out at);
            int n = Count(1, "byte");
            int start = pos;
            pos += n;
            int bad = Utf8.Bad(buf, start, n);
            if (bad != n)
                Soft(Status.E_UTF8, at + 4 + bad, "byte " + D(bad) + " of the string (0x" +
                     CFormat.X(buf[start + bad], 2) + ") is not valid UTF-8");
            path.Pop(mark);
            // Kept going past bad bytes: they become U+FFFD (the model cannot be written back).
            return bad == n ? Utf8.Strict.GetString(buf, start, n) : new System.Text.UTF8Encoding(false, false).GetString(buf, start, n);
        }

        /// <summary>Reads i32_array field <paramref name="name"/>.</summary>
        public int[] ReadI32Array(string name, out long at)
        {
            int mark = Begin(name, 0, "int32 array", out at);
            int n = Count(4, "int32");
            int[] v = new int[n];
            Buffer.BlockCopy(buf, pos, v, 0, 4 * n);
            Bits.FromLittle(v);
            pos += 4 * n;
            path.Pop(mark);
            return v;
        }

        /// <summary>Reads f32_array field <paramref name="name"/>, every bit pattern kept.</summary>
        public float[] ReadF32Array(string name, out long at)
        {
            int mark = Begin(name, 0, "float32 array", out at);
            int n = Count(4, "float32");
            float[] v = new float[n];
            Buffer.BlockCopy(buf, pos, v, 0, 4 * n);
            Bits.FromLittle(v);
            pos += 4 * n;
            path.Pop(mark);
            return v;
        }

        /// <summary>Reads an array of an element type without a named reader into
        /// <paramref name="make"/>(count), a primitive array of <paramref name="width"/>-byte elements
        /// (<paramref name="what"/>: the element's name in messages, "float16").</summary>
        public T[] ReadNums<T>(string name, string what, int width, Func<int, T[]> make, out long at)
        {
            int mark = Begin(name, 0, what + " array", out at);
            int n = Count(width, what);
            T[] v = make(n);
            Buffer.BlockCopy(buf, pos, v, 0, width * n);
            Bits.FromLittle(v, width);
            pos += width * n;
            path.Pop(mark);
            return v;
        }

        /// <summary>Checks a repeated record's count <paramref name="n"/> (field
        /// <paramref name="countName"/>, read at <paramref name="countAt"/>) against the bytes left,
        /// given the smallest encoding of one element, before the elements are allocated.</summary>
        public void Array(string countName, int n, int minBytes, long countAt)
        {
            long left = len - pos;
            if (n < 0)
            {
                int mark = path.Push(countName);
                var e = Fail(Status.E_COUNT_NEGATIVE, countAt, "found " + D(n) + ", expected >= 0");
                path.Pop(mark);
                throw e;
            }
            if (minBytes > 0 && n > left / minBytes)
            {
                int mark = path.Push(countName);
                var e = Fail(Status.E_TRUNCATED, countAt, "found " + D(n) + ", but the " + D(left) +
                    " bytes left hold at most " + D(left / minBytes) + " (each takes >= " + D(minBytes) + " bytes)");
                path.Pop(mark);
                throw e;
            }
        }

        /// <summary>A const field <paramref name="name"/> differs from its value: fatal (E_MAGIC).</summary>
        public NnnException Const(string name, long found, long expected, long at)
        {
            int mark = path.Push(name);
            var e = Fail(Status.E_MAGIC, at, "found " + D(found) + " (0x" +
                CFormat.X((ulong)found & 0xffffffffu, 8) + "), expected " + D(expected));
            path.Pop(mark);
            return e;
        }

        /// <summary>Enum field <paramref name="name"/> holds <paramref name="found"/>, which enum
        /// <paramref name="typeName"/> lacks (<paramref name="valueName"/> names its values).
        /// <paramref name="tagKind"/> non-null ("layer") makes it an unknown ID, fatal: what follows
        /// cannot be framed; otherwise it is E_ENUM.</summary>
        public void Enum(string name, string tagKind, string typeName, Func<long, string> valueName, long found, long at)
        {
            int mark = path.Push(name);
            if (tagKind != null)
            {
                // The ID decides how many bytes follow: nothing after it can be read.
                string loaded = Utf8.Cut(Registry != null ? Registry.Names() : "none", 255);
                var e = Fail(Status.E_UNKNOWN_ID, at, tagKind + " ID " + D(found) +
                    " is not defined by this codec's schema, and no loaded plugin provides it (plugins loaded: " +
                    loaded + "); nothing after it can be read");
                path.Pop(mark);
                throw e;
            }
            var known = new System.Text.StringBuilder();
            for (long v = 0; v < 256 && known.Length < 256 - 32; v++)
            {
                string n = valueName(v);
                if (n != null)
                    known.Append(known.Length > 0 ? ", " : "").Append(D(v)).Append(" (").Append(n).Append(')');
            }
            Soft(Status.E_ENUM, at, typeName + " " + D(found) + " is not one of " + known);
            path.Pop(mark);
        }

        /// <summary>After the root record: no bytes may remain (E_TRAILING).</summary>
        public void End()
        {
            if (pos != len)
                Soft(Status.E_TRAILING, pos, D(len - pos) + " bytes follow the last layer, expected none");
        }

        /// <summary>The decode-stage rule dims_product: every dim >= 0 and their product
        /// (64-bit, overflow-checked) equal to the data's <paramref name="count"/>.</summary>
        public void DimsCount(int[] dims, long dimsAt, long count, long dataAt)
        {
            ulong prod = 1;
            bool zero = false, overflow = false;
            for (int i = 0; i < dims.Length; i++)
            {
                if (dims[i] < 0)
                {
                    int mark = path.Push("dims");
                    path.Index(i);
                    Soft(Status.E_DIM_NEGATIVE, dimsAt + 4 + 4L * i, "found " + D(dims[i]) + ", expected >= 0");
                    path.Pop(mark);
                    return;
                }
                ulong d = (ulong)dims[i];
                if (d == 0)
                    zero = true;
                else if (prod > ulong.MaxValue / d)
                    overflow = true;
                else
                    prod *= d;
            }
            if (zero)
            {
                prod = 0;
            }
            else if (overflow)
            {
                int mark = path.Push("dims");
                Soft(Status.E_DIM_OVERFLOW, dimsAt, "the product of " + D(dims.Length) + " dims exceeds 2^64");
                path.Pop(mark);
                return;
            }
            if (prod != (ulong)count)
            {
                int mark = path.Push("data");
                Soft(Status.E_DIM_MISMATCH, dataAt, "dims multiply to " + CFormat.U(prod) + ", but data has " +
                     D(count) + " values");
                path.Pop(mark);
            }
        }

        // ---- IDs the schema lacks: the registry answers

        /// <summary>The plugin type that provides ID <paramref name="id"/> of kind
        /// <paramref name="kind"/>, or null (always null without a registry).</summary>
        public PluginType FindExt(ExtKind kind, long id) => Registry?.Find(kind, id) ?? Unknown?.Invoke(this, kind, id);

        /// <summary>Asked about an ID the registry lacks (the probe's guesses, Probe.cs); null: nobody.</summary>
        internal Func<Cursor, ExtKind, long, PluginType> Unknown { get; set; }

        /// <summary>The path of the field being read.</summary>
        internal string Path => path.Path;

        /// <summary>Skips <paramref name="n"/> bytes (the probe's guess for an unknown element's fields).</summary>
        internal void Skip(long n)
        {
            if (n > Left)
                throw Fail(Status.E_TRUNCATED, pos, "need " + D(n) + " bytes, " + D(Left) + " left");
            pos += (int)n;
        }

        /// <summary>Decodes the fields of an element of plugin type <paramref name="type"/>.</summary>
        public object DecodeExt(PluginType type) => type.Decode(this);
    }
}
