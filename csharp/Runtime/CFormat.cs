// CFormat.cs: numbers as C's printf writes them in libnnn's messages
// (%d and PRId64, PRIu64, %x with its width and '#', %g at any precision),
// so that a message made here is byte for byte the one libnnn makes.
// .NET's own formats differ (exponent digits, "NaN", round-trip rules) and
// depend on the culture; these do not.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Nnn
{
    static class CFormat
    {
        /// <summary><c>%d</c>, <c>PRId64</c>.</summary>
        internal static string D(long v) => v.ToString(CultureInfo.InvariantCulture);

        /// <summary><c>%zu</c>, <c>PRIu64</c>.</summary>
        internal static string U(ulong v) => v.ToString(CultureInfo.InvariantCulture);

        /// <summary><c>%x</c> with a zero-padded <paramref name="width"/> (<c>%08x</c>), and with
        /// <paramref name="alt"/> <c>%#x</c>: "0x" before any value but 0.</summary>
        internal static string X(ulong v, int width = 0, bool alt = false)
        {
            string s = v.ToString("x", CultureInfo.InvariantCulture);
            if (alt && v != 0)
                width -= 2;
            if (s.Length < width)
                s = new string('0', width - s.Length) + s;
            return alt && v != 0 ? "0x" + s : s;
        }

        /// <summary><c>%g</c> (precision 6), <c>%.9g</c>, <c>%.7g</c>, ...: the exact binary value
        /// rounded to <paramref name="precision"/> significant digits (ties to even, as glibc rounds),
        /// trailing zeros dropped; "nan", "-nan", "inf" and "-inf" as glibc writes them. (No <c>%#g</c>:
        /// no message uses it, and glibc's keeps fewer zeros than C asks after a carry, "1.e+06".)</summary>
        internal static string G(double v, int precision = 6)
        {
            long bits = BitConverter.DoubleToInt64Bits(v);
            string sign = bits < 0 ? "-" : "";
            if (double.IsNaN(v))
                return sign + "nan";
            if (double.IsInfinity(v))
                return sign + "inf";
            int p = precision == 0 ? 1 : precision;
            int exp;
            string digits = Round(bits, p, out exp);
            var sb = new StringBuilder(sign);
            if (exp < -4 || exp >= p)
            {
                // d.ddd, then e+XX (at least two exponent digits)
                string frac = digits.Substring(1).TrimEnd('0');
                sb.Append(digits[0]);
                if (frac.Length > 0)
                    sb.Append('.').Append(frac);
                sb.Append(exp < 0 ? "e-" : "e+");
                int e = Math.Abs(exp);
                if (e < 10)
                    sb.Append('0');
                sb.Append(e.ToString(CultureInfo.InvariantCulture));
                return sb.ToString();
            }
            // fixed: exp + 1 digits before the point (at least "0"), the rest after
            string intPart, fracPart;
            if (exp >= 0)
            {
                intPart = digits.Substring(0, exp + 1);
                fracPart = digits.Substring(exp + 1);
            }
            else
            {
                intPart = "0";
                fracPart = new string('0', -exp - 1) + digits;
            }
            fracPart = fracPart.TrimEnd('0');
            sb.Append(intPart);
            if (fracPart.Length > 0)
                sb.Append('.').Append(fracPart);
            return sb.ToString();
        }

        /// <summary>The finite double of <paramref name="bits"/>, its sign left out, rounded to
        /// <paramref name="p"/> significant digits (ties to even): the digits, and in
        /// <paramref name="exp"/> the power of ten of the first. Zero is "000..." with exp 0.</summary>
        static string Round(long bits, int p, out int exp)
        {
            int field = (int)((bits >> 52) & 0x7ff);
            ulong m = (ulong)bits & 0xfffffffffffffUL;
            if (field != 0)
                m |= 1UL << 52;
            int e2 = field == 0 ? -1074 : field - 1075; // value = m * 2^e2
            if (m == 0)
            {
                exp = 0;
                return new string('0', p);
            }
            // Exact: m * 2^e2 as an integer, or m * 5^-e2 with the point -e2 digits from its end.
            var n = new List<uint>();
            n.Add((uint)(m % Base));
            n.Add((uint)(m / Base % Base));
            n.Add((uint)(m / Base / Base));
            int scale = 0;
            if (e2 >= 0)
            {
                for (int k = e2; k > 0; k -= 30)
                    Mul(n, 1U << Math.Min(k, 30));
            }
            else
            {
                scale = -e2;
                for (int k = scale; k > 0; k -= 13)
                    Mul(n, Pow5(Math.Min(k, 13)));
            }
            string all = Decimal(n);
            exp = all.Length - 1 - scale;
            if (all.Length <= p)
                return all + new string('0', p - all.Length);
            char[] d = all.Substring(0, p).ToCharArray();
            bool up;
            if (all[p] != '5')
                up = all[p] > '5';
            else
            {
                bool rest = false;
                for (int i = p + 1; i < all.Length && !rest; i++)
                    rest = all[i] != '0';
                up = rest || (d[p - 1] - '0') % 2 == 1;
            }
            if (up)
            {
                int i = p - 1;
                while (i >= 0 && d[i] == '9')
                    d[i--] = '0';
                if (i < 0)
                {
                    exp++;
                    return "1" + new string(d, 0, p - 1);
                }
                d[i]++;
            }
            return new string(d);
        }

        const uint Base = 1000000000; // a limb holds 9 decimal digits

        static uint Pow5(int k)
        {
            uint r = 1;
            while (k-- > 0)
                r *= 5;
            return r;
        }

        /// <summary>n (little-endian limbs of 9 digits) *= f, f &lt; 2^31.</summary>
        static void Mul(List<uint> n, uint f)
        {
            ulong carry = 0;
            for (int i = 0; i < n.Count; i++)
            {
                ulong x = (ulong)n[i] * f + carry;
                n[i] = (uint)(x % Base);
                carry = x / Base;
            }
            while (carry > 0)
            {
                n.Add((uint)(carry % Base));
                carry /= Base;
            }
        }

        static string Decimal(List<uint> n)
        {
            int top = n.Count - 1;
            while (top > 0 && n[top] == 0)
                top--;
            var sb = new StringBuilder(n[top].ToString(CultureInfo.InvariantCulture));
            for (int i = top - 1; i >= 0; i--)
                sb.Append(n[i].ToString("D9", CultureInfo.InvariantCulture));
            return sb.ToString();
        }
    }
}
