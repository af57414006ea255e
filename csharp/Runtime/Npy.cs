// Npy.cs: float32 NumPy .npy files, the arrays `nnnkit run` reads and writes.
// Only what np.save writes for a C-ordered '<f4' array is read (versions 1.0
// and 2.0); anything else is refused with E_NPY, the field (libnnn's npy.c
// names the same ones) and the byte offset, before anything is allocated.
// Writing gives np.save's bytes exactly, as libnnn's nnn_npy_encode does.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;

namespace Nnn
{
    /// <summary>Reads and writes float32 .npy files (C order, little-endian '&lt;f4').</summary>
    public static class Npy
    {
        static readonly byte[] Magic = { 0x93, (byte)'N', (byte)'U', (byte)'M', (byte)'P', (byte)'Y' };
        const string Fix = "save it with np.save(path, np.ascontiguousarray(x, dtype='<f4'))";
        const int Align = 64;         // numpy's ARRAY_ALIGN: the data starts on a multiple of it
        const int GrowthDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS: room for the first dim to grow

        /// <summary>Reads the .npy file at <paramref name="path"/>.</summary>
        /// <param name="path">the file</param>
        /// <param name="shape">the array's shape (empty for a scalar)</param>
        /// <returns>the elements, C order</returns>
        public static float[] Read(string path, out long[] shape)
        {
            return Read(File.ReadAllBytes(path), out shape);
        }

        /// <summary>Reads a .npy file's bytes. Throws <see cref="NnnException"/> (E_NPY, with the
        /// field and the byte offset) for anything but a C-ordered '&lt;f4' array of version 1.0
        /// or 2.0 whose data is exactly what its shape calls for.</summary>
        /// <param name="bytes">the file's bytes</param>
        /// <param name="shape">the array's shape (empty for a scalar)</param>
        /// <returns>the elements, C order</returns>
        public static float[] Read(byte[] bytes, out long[] shape)
        {
            if (bytes == null)
                throw new ArgumentNullException(nameof(bytes));
            for (int i = 0; i < Magic.Length; i++)
                if (i >= bytes.Length || bytes[i] != Magic[i])
                    throw Fail("magic", 0, "magic: expected \"\\x93NUMPY\" (a .npy file); " + Fix);
            if (bytes.Length < 10)
                throw Fail("version", bytes.Length, "the file ends after " + bytes.Length +
                           " bytes, inside the preamble; a .npy file has at least 10");
            int major = bytes[6], minor = bytes[7];
            if ((major != 1 && major != 2) || minor != 0)
                throw Fail("version", 6, "version " + major + "." + minor + ", expected 1.0 or 2.0; " + Fix);
            int start = major == 1 ? 10 : 12;
            if (bytes.Length < start)
                throw Fail("header_len", bytes.Length, "the file ends after " + bytes.Length +
                           " bytes, inside the preamble; a version 2.0 file has at least 12");
            long headerLen = major == 1 ? bytes[8] | bytes[9] << 8 : (long)BitConverter.ToUInt32(LittleEndian(bytes, 8, 4), 0);
            if (headerLen > bytes.Length - start)
                throw Fail("header", bytes.Length, "header_len is " + headerLen + " but the file ends " +
                           (bytes.Length - start) + " bytes into the header");
            // Versions 1.0 and 2.0 hold latin-1 text: one char a byte (no code page needed), so a
            // char's index is its offset.
            var text = new char[headerLen];
            for (int k = 0; k < text.Length; k++)
                text[k] = (char)bytes[start + k];
            var header = new Header(new string(text), start);
            shape = header.Parse();

            long count = 1;
            for (int i = 0; i < shape.Length; i++)
            {
                if (shape[i] != 0 && count > long.MaxValue / shape[i])
                    throw Fail("shape[" + i + "]", -1, "the product of the dims passes 2^63 - 1 at shape[" + i + "]");
                count *= shape[i];
            }
            long left = bytes.Length - start - headerLen;
            if (count > left / 4)
                throw Fail("data", bytes.Length, "shape " + Text(shape) + " needs " + count +
                           " float32 elements, but the file ends " + left + " bytes after the header");
            if (count * 4 != left)
                throw Fail("data", start + headerLen + count * 4, (left - count * 4) +
                           " bytes after the data: shape " + Text(shape) + " takes " + count * 4 +
                           " bytes; the shape is wrong or bytes were appended");
            var data = new float[count];
            CopyLittleEndian(bytes, (int)(start + headerLen), data);
            return data;
        }

        /// <summary>The bytes np.save writes for <paramref name="data"/> of
        /// <paramref name="shape"/> as a C-ordered float32 array (a version 1.0 header).</summary>
        /// <param name="shape">the shape (empty for a scalar); dims >= 0</param>
        /// <param name="data">the elements, C order: the product of the dims</param>
        public static byte[] ToBytes(long[] shape, float[] data)
        {
            if (shape == null || data == null)
                throw new ArgumentNullException(shape == null ? nameof(shape) : nameof(data));
            long count = 1;
            foreach (long d in shape)
            {
                if (d < 0)
                    throw new ArgumentException("shape " + Text(shape) + " has a negative dimension", nameof(shape));
                count = checked(count * d);
            }
            if (count != data.LongLength)
                throw new ArgumentException("shape " + Text(shape) + " takes " + count + " floats, data holds " +
                                            data.LongLength, nameof(data));
            var h = new StringBuilder("{'descr': '<f4', 'fortran_order': False, 'shape': " + Text(shape) + ", }");
            if (shape.Length > 0)
                h.Append(' ', Math.Max(0, GrowthDigits - shape[0].ToString().Length));
            h.Append(' ', Align - (10 + h.Length + 1) % Align).Append('\n');
            if (h.Length > ushort.MaxValue)
                throw new ArgumentException("a shape of " + shape.Length + " dims makes too long a header", nameof(shape));
            var bytes = new byte[10 + h.Length + data.LongLength * 4];
            Array.Copy(Magic, bytes, Magic.Length);
            bytes[6] = 1;
            bytes[8] = (byte)h.Length;
            bytes[9] = (byte)(h.Length >> 8);
            Encoding.ASCII.GetBytes(h.ToString(), 0, h.Length, bytes, 10);
            int at = 10 + h.Length;
            Buffer.BlockCopy(data, 0, bytes, at, checked(data.Length * 4));
            if (!BitConverter.IsLittleEndian)
                for (int i = at; i < bytes.Length; i += 4)
                    Array.Reverse(bytes, i, 4);
            return bytes;
        }

        /// <summary>Writes <paramref name="data"/> of <paramref name="shape"/> to
        /// <paramref name="path"/> as <see cref="ToBytes"/> makes it, atomically: into a
        /// temporary file in the same folder, renamed into place (removed on failure).</summary>
        public static void Write(string path, long[] shape, float[] data)
        {
            byte[] bytes = ToBytes(shape, data);
            AtomicFile.Write(path, s => s.Write(bytes, 0, bytes.Length));
        }

        static NnnException Fail(string path, long offset, string message)
        {
            return new NnnException(new Problem(Status.E_NPY, path, offset, message));
        }

        /// <summary>A shape as Python writes a tuple: "(2, 3)", "(5,)", "()".</summary>
        static string Text(long[] shape)
        {
            return shape.Length == 1 ? "(" + shape[0] + ",)" : "(" + string.Join(", ", shape) + ")";
        }

        static byte[] LittleEndian(byte[] b, int at, int n)
        {
            var r = new byte[n];
            Array.Copy(b, at, r, 0, n);
            if (!BitConverter.IsLittleEndian)
                Array.Reverse(r);
            return r;
        }

        static void CopyLittleEndian(byte[] b, int at, float[] data)
        {
            if (BitConverter.IsLittleEndian)
            {
                Buffer.BlockCopy(b, at, data, 0, data.Length * 4);
                return;
            }
            for (int i = 0; i < data.Length; i++)
                data[i] = BitConverter.ToSingle(LittleEndian(b, at + 4 * i, 4), 0);
        }

        /// <summary>The header dict, parsed as strictly as libnnn's npy.c parses it: exactly the
        /// keys 'descr', 'fortran_order' and 'shape', in any order, with any whitespace.</summary>
        sealed class Header
        {
            readonly string s;
            readonly long at; // the file offset of s[0]
            int i;

            internal Header(string s, long at)
            {
                this.s = s;
                this.at = at;
            }

            long Here => at + i;

            NnnException Bad(string path, string expected)
            {
                string found = i < s.Length ? "'" + s.Substring(i, Math.Min(16, s.Length - i)) + "'" : "the end";
                return Fail(path, Here, path + ": found " + found + ", expected " + expected);
            }

            void Space()
            {
                while (i < s.Length && " \t\n\r\f".IndexOf(s[i]) >= 0)
                    i++;
            }

            int Peek => i < s.Length ? s[i] : -1;

            string Quoted()
            {
                int q = Peek;
                if (q != '\'' && q != '"')
                    return null;
                int j = i + 1;
                while (j < s.Length && s[j] != q && s[j] != '\\' && s[j] != '\n')
                    j++;
                if (j >= s.Length || s[j] != q)
                    return null;
                string r = s.Substring(i + 1, j - i - 1);
                i = j + 1;
                return r;
            }

            internal long[] Parse()
            {
                long[] shape = null;
                var seen = new HashSet<string>();
                Space();
                if (Peek != '{')
                    throw Bad("header", "a dict: '{'");
                i++;
                for (;;)
                {
                    Space();
                    if (Peek == '}')
                        break;
                    long keyAt = Here;
                    string key = Quoted();
                    if (key == null)
                        throw Bad("header", "a key in quotes or '}'");
                    if (key != "descr" && key != "fortran_order" && key != "shape")
                        throw Fail("header", keyAt, "header has the key '" + key +
                                   "'; expected only 'descr', 'fortran_order' and 'shape'");
                    if (!seen.Add(key))
                        throw Fail(key, keyAt, "header has the key '" + key + "' twice");
                    Space();
                    if (Peek != ':')
                        throw Bad(key, "':'");
                    i++;
                    Space();
                    if (key == "descr")
                        Descr();
                    else if (key == "fortran_order")
                        FortranOrder();
                    else
                        shape = Shape();
                    Space();
                    if (Peek == ',')
                        i++;
                    else if (Peek != '}')
                        throw Bad("header", "',' or '}'");
                }
                i++;
                Space();
                if (i != s.Length)
                    throw Bad("header", "only spaces and a newline after the dict");
                foreach (string k in new[] { "descr", "fortran_order", "shape" })
                    if (!seen.Contains(k))
                        throw Fail("header", at, "header has no '" + k +
                                   "' key; expected 'descr', 'fortran_order' and 'shape'");
                return shape;
            }

            void Descr()
            {
                long start = Here;
                string d = Quoted();
                if (d == null)
                    throw Bad("descr", "a dtype in quotes: '<f4'; " + Fix);
                if (d != "<f4")
                    throw Fail("descr", start, "descr is '" + d + "', expected '<f4' (little-endian float32); " + Fix);
            }

            void FortranOrder()
            {
                if (string.CompareOrdinal(s, i, "False", 0, 5) == 0 && (i + 5 == s.Length || !Ident(s[i + 5])))
                {
                    i += 5;
                    return;
                }
                throw Bad("fortran_order", "False (C order); " + Fix);
            }

            static bool Ident(char c) => char.IsLetterOrDigit(c) || c == '_';

            long[] Shape()
            {
                var dims = new List<long>();
                long start = Here;
                int commas = 0;
                if (Peek != '(')
                    throw Bad("shape", "a tuple such as (2, 3)");
                i++;
                for (;;)
                {
                    Space();
                    if (Peek == ')')
                        break;
                    if (dims.Count == Native.MaxRank)
                        throw Fail("shape", Here, "shape has more than " + Native.MaxRank +
                                   " dimensions, the most nnnkit handles");
                    dims.Add(Dim(dims.Count));
                    Space();
                    if (Peek == ',')
                    {
                        i++;
                        commas++;
                    }
                    else if (Peek != ')')
                        throw Bad("shape", "',' or ')'");
                }
                i++;
                if (dims.Count == 1 && commas == 0)
                    throw Fail("shape", start, "shape is (" + dims[0] +
                               "), which Python reads as a number, not a tuple; expected (" + dims[0] + ",)");
                return dims.ToArray();
            }

            long Dim(int k)
            {
                string path = "shape[" + k + "]";
                if (Peek < '0' || Peek > '9')
                    throw Bad(path, "a non-negative integer");
                long start = Here;
                long v = 0;
                while (Peek >= '0' && Peek <= '9')
                {
                    int digit = s[i] - '0';
                    if (v > (long.MaxValue - digit) / 10)
                        throw Fail(path, start, path + " is more than 2^63 - 1");
                    v = v * 10 + digit;
                    i++;
                }
                if (Peek == 'L' && !(i + 1 < s.Length && Ident(s[i + 1])))
                    i++; // 5L: written by Python 2 (numpy reads it too)
                if (Peek >= 0 && (Ident((char)Peek) || Peek == '.'))
                    throw Bad(path, "a non-negative integer");
                return v;
            }
        }
    }
}
