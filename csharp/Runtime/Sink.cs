// Sink.cs: the writer generated encoders are built on (a port of
// runtime/codec/encode.c's nnn_wr_*): little-endian bytes into a stream,
// floats bit for bit.
using System;
using System.IO;

namespace Nnn
{
    /// <summary>A byte writer for the encoder: each value little-endian, as the format stores it.</summary>
    public sealed class Sink
    {
        readonly Stream output;
        readonly byte[] b8 = new byte[8];

        /// <summary>A sink writing to <paramref name="stream"/>.</summary>
        public Sink(Stream stream)
        {
            output = stream ?? throw new ArgumentNullException(nameof(stream));
        }

        /// <summary>Writes the low <paramref name="width"/> bytes of <paramref name="bits"/>, little-endian.</summary>
        public void WriteNum(int width, ulong bits)
        {
            for (int i = 0; i < width; i++)
                b8[i] = (byte)(bits >> (8 * i));
            output.Write(b8, 0, width);
        }

        /// <summary>Writes a u8.</summary>
        public void WriteU8(byte v) => output.WriteByte(v);

        /// <summary>Writes an i32.</summary>
        public void WriteI32(int v) => WriteNum(4, (uint)v);

        /// <summary>Writes a u64.</summary>
        public void WriteU64(ulong v) => WriteNum(8, v);

        /// <summary>Writes an f32, bit for bit.</summary>
        public void WriteF32(float v)
        {
            byte[] b = BitConverter.GetBytes(v);
            if (!BitConverter.IsLittleEndian)
                System.Array.Reverse(b);
            output.Write(b, 0, 4);
        }

        /// <summary>Writes a bool as 1 or 0.</summary>
        public void WriteBool(bool v) => output.WriteByte(v ? (byte)1 : (byte)0);

        /// <summary>Writes a string: its UTF-8 length as an i32, then its bytes.</summary>
        public void WriteString(string v)
        {
            byte[] b;
            try
            {
                b = Utf8.Strict.GetBytes(v ?? "");
            }
            catch (ArgumentException)
            {
                throw Fail(Status.E_UTF8, "string", "the text holds a lone surrogate, which UTF-8 cannot encode");
            }
            WriteI32(b.Length);
            output.Write(b, 0, b.Length);
        }

        /// <summary>Writes an i32_array: its count, then its values.</summary>
        public void WriteI32Array(int[] v) => WriteNums(4, v ?? new int[0]);

        /// <summary>Writes an f32_array: its count, then its values bit for bit.</summary>
        public void WriteF32Array(float[] v) => WriteNums(4, v ?? new float[0]);

        /// <summary>Writes an array of <paramref name="width"/>-byte elements: its count, then its values.</summary>
        public void WriteNums(int width, Array v)
        {
            WriteI32(v.Length);
            byte[] b = Bits.ToLittle(v, width);
            output.Write(b, 0, b.Length);
        }

        /// <summary>A value the encoder cannot write (an unknown ID, a negative count), as libnnn
        /// reports it: field <paramref name="name"/>, no offset, "cannot encode: ...".</summary>
        public static NnnException Fail(Status code, string name, string message)
        {
            return new NnnException(new Problem(code, name, -1, "cannot encode: " + message));
        }

        /// <summary>The variant field <paramref name="name"/>'s value as the record its tag selects
        /// (<paramref name="record"/>, by its schema name); anything else cannot be encoded (E_USAGE).</summary>
        public T Expect<T>(object body, string name, string record) where T : class
        {
            var t = body as T;
            if (t == null)
                throw Fail(Status.E_USAGE, name, (body == null ? "holds nothing" : "holds another record") +
                           ", expected the " + record + " record its tag selects");
            return t;
        }

        /// <summary>The UTF-8 byte count of <paramref name="s"/>.</summary>
        public static ulong StringSize(string s) => (ulong)Utf8.Strict.GetByteCount(s ?? "");

        /// <summary>An integer as C's %d prints it.</summary>
        public static string D(long v) => CFormat.D(v);
    }
}
