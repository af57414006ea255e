// Utf8.cs: UTF-8 checks and cuts the runtime shares.
using System.Text;

namespace Nnn
{
    static class Utf8
    {
        /// <summary>Strict UTF-8: an invalid sequence throws instead of becoming U+FFFD.</summary>
        internal static readonly UTF8Encoding Strict = new UTF8Encoding(false, true);

        /// <summary><paramref name="s"/> cut to at most <paramref name="max"/> UTF-8 bytes, as
        /// libnnn's fixed buffers cut it (snprintf: bytes, not characters; a character cut in
        /// two is dropped whole, so the text stays valid).</summary>
        internal static string Cut(string s, int max)
        {
            if (s.Length <= max / 3 || Strict.GetByteCount(s) <= max)
                return s;
            int n = 0, i = 0;
            while (i < s.Length)
            {
                int step = char.IsSurrogatePair(s, i) ? 2 : 1;
                int bytes = Strict.GetByteCount(s.Substring(i, step));
                if (n + bytes > max)
                    break;
                n += bytes;
                i += step;
            }
            return s.Substring(0, i);
        }

        /// <summary>The index of the first byte of <paramref name="b"/>[start, start + n) that starts
        /// no valid UTF-8 sequence, or n when all are valid (libnnn's nnn_utf8_bad: overlong forms,
        /// surrogates and code points past U+10FFFF are invalid).</summary>
        internal static int Bad(byte[] b, int start, int n)
        {
            int i = 0;
            while (i < n)
            {
                int k = Seq(b, start + i, n - i);
                if (k == 0)
                    return i;
                i += k;
            }
            return n;
        }

        // The length of the valid sequence at b[p] (n bytes left), 0 when none (esc.c's nnn_utf8_seq).
        static int Seq(byte[] b, int p, int n)
        {
            int len;
            uint cp, min;
            byte c = b[p];
            if (c < 0x80)
                return 1;
            if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1fu; min = 0x80; }
            else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0fu; min = 0x800; }
            else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07u; min = 0x10000; }
            else return 0;
            if (len > n)
                return 0;
            for (int i = 1; i < len; i++)
            {
                if ((b[p + i] & 0xc0) != 0x80)
                    return 0;
                cp = cp << 6 | (b[p + i] & 0x3fu);
            }
            if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
            return len;
        }
    }
}
