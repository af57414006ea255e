// Bits.cs: numbers to and from little-endian bytes, bit for bit: floats
// are moved as bytes (BitConverter, Buffer.BlockCopy), never through
// arithmetic, so every pattern (NaN payloads, -0) is kept.
using System;

namespace Nnn
{
    static class Bits
    {
        /// <summary>The float whose little-endian bytes are at <paramref name="p"/>.</summary>
        internal static float ToSingle(byte[] b, int p)
        {
            if (BitConverter.IsLittleEndian)
                return BitConverter.ToSingle(b, p);
            return BitConverter.ToSingle(new[] { b[p + 3], b[p + 2], b[p + 1], b[p] }, 0);
        }

        /// <summary>Array elements copied from little-endian bytes, put in the host's order.</summary>
        internal static void FromLittle(Array a, int width = 4)
        {
            if (BitConverter.IsLittleEndian || width == 1)
                return;
            int n = Buffer.ByteLength(a);
            byte[] b = new byte[n];
            Buffer.BlockCopy(a, 0, b, 0, n);
            Swap(b, width);
            Buffer.BlockCopy(b, 0, a, 0, n);
        }

        /// <summary>The bytes of a primitive array, little-endian.</summary>
        internal static byte[] ToLittle(Array a, int width = 4)
        {
            int n = Buffer.ByteLength(a);
            byte[] b = new byte[n];
            Buffer.BlockCopy(a, 0, b, 0, n);
            if (!BitConverter.IsLittleEndian && width > 1)
                Swap(b, width);
            return b;
        }

        static void Swap(byte[] b, int width)
        {
            for (int i = 0; i + width <= b.Length; i += width)
                System.Array.Reverse(b, i, width);
        }
    }
}
