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
    }
}
