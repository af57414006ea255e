// Json.cs: the strict JSON the testee protocol needs (RFC 8259, as jansson
// reads it for `nnnkit testee`): one value, nothing after it; duplicate
// keys, lone surrogates, integers past 64 bits and nesting past 2048
// refused. Objects are dictionaries, arrays lists, integers long, other
// numbers double, null Json.Null.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Nnn.Tool
{
    /// <summary>A JSON text that is not one strict JSON value.</summary>
    sealed class JsonError : Exception
    {
        public JsonError(string message) : base(message) { }
    }

    /// <summary>Reads and writes JSON values.</summary>
    static class Json
    {
        /// <summary>JSON's null (a missing key is C#'s null).</summary>
        public static readonly object Null = new object();

        const int MaxDepth = 2048;

        /// <summary>The one value of <paramref name="text"/>; JsonError saying what and where otherwise.</summary>
        public static object Parse(string text)
        {
            var r = new Reader(text);
            r.Space();
            object v = r.Value(0);
            r.Space();
            if (r.Pos < text.Length)
                throw r.Fail("end of input expected after the value");
            return v;
        }

        sealed class Reader
        {
            readonly string s;
            public int Pos;

            public Reader(string text) { s = text; }

            public JsonError Fail(string what) =>
                new JsonError(what + ", at character " + Pos.ToString(CultureInfo.InvariantCulture));

            public void Space()
            {
                while (Pos < s.Length && (s[Pos] == ' ' || s[Pos] == '\t' || s[Pos] == '\n' || s[Pos] == '\r'))
                    Pos++;
            }

            public object Value(int depth)
            {
                if (depth > MaxDepth)
                    throw Fail("nested too deep");
                if (Pos >= s.Length)
                    throw Fail("a value expected, not the end");
                char c = s[Pos];
                switch (c)
                {
                    case '{': return Object(depth);
                    case '[': return Array(depth);
                    case '"': return String();
                    case 't': Word("true"); return true;
                    case 'f': Word("false"); return false;
                    case 'n': Word("null"); return Null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9'))
                            return Number();
                        throw Fail("unexpected '" + c + "'");
                }
            }

            void Word(string w)
            {
                if (string.CompareOrdinal(s, Pos, w, 0, w.Length) != 0)
                    throw Fail("invalid token");
                Pos += w.Length;
            }

            Dictionary<string, object> Object(int depth)
            {
                var o = new Dictionary<string, object>();
                Pos++;
                Space();
                if (Pos < s.Length && s[Pos] == '}')
                {
                    Pos++;
                    return o;
                }
                while (true)
                {
                    Space();
                    if (Pos >= s.Length || s[Pos] != '"')
                        throw Fail("a string key expected");
                    string k = String();
                    if (o.ContainsKey(k))
                        throw Fail("duplicate key \"" + k + "\"");
                    Space();
                    if (Pos >= s.Length || s[Pos] != ':')
                        throw Fail("':' expected");
                    Pos++;
                    Space();
                    o[k] = Value(depth + 1);
                    Space();
                    if (Pos < s.Length && s[Pos] == ',')
                    {
                        Pos++;
                        continue;
                    }
                    if (Pos < s.Length && s[Pos] == '}')
                    {
                        Pos++;
                        return o;
                    }
                    throw Fail("',' or '}' expected");
                }
            }

            List<object> Array(int depth)
            {
                var a = new List<object>();
                Pos++;
                Space();
                if (Pos < s.Length && s[Pos] == ']')
                {
                    Pos++;
                    return a;
                }
                while (true)
                {
                    Space();
                    a.Add(Value(depth + 1));
                    Space();
                    if (Pos < s.Length && s[Pos] == ',')
                    {
                        Pos++;
                        continue;
                    }
                    if (Pos < s.Length && s[Pos] == ']')
                    {
                        Pos++;
                        return a;
                    }
                    throw Fail("',' or ']' expected");
                }
            }

            string String()
            {
                var b = new StringBuilder();
                Pos++;
                while (true)
                {
                    if (Pos >= s.Length)
                        throw Fail("unterminated string");
                    char c = s[Pos++];
                    if (c == '"')
                        break;
                    if (c < 0x20)
                        throw Fail("control character in a string");
                    if (char.IsSurrogate(c))
                    {
                        // The line came from strict UTF-8: pairs are whole.
                        b.Append(c);
                        continue;
                    }
                    if (c != '\\')
                    {
                        b.Append(c);
                        continue;
                    }
                    if (Pos >= s.Length)
                        throw Fail("unterminated string");
                    char e = s[Pos++];
                    switch (e)
                    {
                        case '"': b.Append('"'); break;
                        case '\\': b.Append('\\'); break;
                        case '/': b.Append('/'); break;
                        case 'b': b.Append('\b'); break;
                        case 'f': b.Append('\f'); break;
                        case 'n': b.Append('\n'); break;
                        case 'r': b.Append('\r'); break;
                        case 't': b.Append('\t'); break;
                        case 'u':
                            int u = Hex4();
                            if (u >= 0xD800 && u <= 0xDBFF)
                            {
                                if (Pos + 1 >= s.Length || s[Pos] != '\\' || s[Pos + 1] != 'u')
                                    throw Fail("lone surrogate \\u" + u.ToString("X4", CultureInfo.InvariantCulture));
                                Pos += 2;
                                int lo = Hex4();
                                if (lo < 0xDC00 || lo > 0xDFFF)
                                    throw Fail("lone surrogate \\u" + u.ToString("X4", CultureInfo.InvariantCulture));
                                b.Append((char)u).Append((char)lo);
                            }
                            else if (u >= 0xDC00 && u <= 0xDFFF)
                                throw Fail("lone surrogate \\u" + u.ToString("X4", CultureInfo.InvariantCulture));
                            else if (u == 0)
                                throw Fail("\\u0000 in a string");
                            else
                                b.Append((char)u);
                            break;
                        default:
                            throw Fail("invalid escape '\\" + e + "'");
                    }
                }
                return b.ToString();
            }

            int Hex4()
            {
                if (Pos + 4 > s.Length)
                    throw Fail("\\u needs four hex digits");
                int v;
                if (!int.TryParse(s.Substring(Pos, 4), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out v))
                    throw Fail("\\u needs four hex digits");
                Pos += 4;
                return v;
            }

            object Number()
            {
                int start = Pos;
                bool real = false;
                if (s[Pos] == '-')
                    Pos++;
                if (Pos < s.Length && s[Pos] == '0')
                    Pos++;
                else if (Pos < s.Length && s[Pos] >= '1' && s[Pos] <= '9')
                    Digits();
                else
                    throw Fail("invalid number");
                if (Pos < s.Length && s[Pos] == '.')
                {
                    Pos++;
                    real = true;
                    if (Digits() == 0)
                        throw Fail("invalid number");
                }
                if (Pos < s.Length && (s[Pos] == 'e' || s[Pos] == 'E'))
                {
                    Pos++;
                    real = true;
                    if (Pos < s.Length && (s[Pos] == '+' || s[Pos] == '-'))
                        Pos++;
                    if (Digits() == 0)
                        throw Fail("invalid number");
                }
                string t = s.Substring(start, Pos - start);
                if (!real)
                {
                    long l;
                    if (!long.TryParse(t, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l))
                        throw Fail("too big integer");
                    return l;
                }
                double d = double.Parse(t, NumberStyles.Float, CultureInfo.InvariantCulture);
                if (double.IsInfinity(d))
                    throw Fail("real number overflow");
                return d;
            }

            int Digits()
            {
                int n = 0;
                while (Pos < s.Length && s[Pos] >= '0' && s[Pos] <= '9')
                {
                    Pos++;
                    n++;
                }
                return n;
            }
        }

        /// <summary>Appends <paramref name="s"/> as a JSON string (null as null).</summary>
        public static StringBuilder Str(this StringBuilder b, string s)
        {
            if (s == null)
                return b.Append("null");
            b.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    default:
                        // Controls, and the line and paragraph separators
                        // some JSON readers take for line ends.
                        if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029')
                            b.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else
                            b.Append(c);
                        break;
                }
            }
            return b.Append('"');
        }

        /// <summary>What a value is, for a message: its JSON text when short.</summary>
        public static string Describe(object v)
        {
            if (v == null)
                return "missing";
            if (v == Null)
                return "null";
            if (v is bool)
                return (bool)v ? "true" : "false";
            if (v is long)
                return ((long)v).ToString(CultureInfo.InvariantCulture);
            if (v is double)
                return ((double)v).ToString("R", CultureInfo.InvariantCulture);
            if (v is string)
                return new StringBuilder().Str((string)v).ToString();
            return v is List<object> ? "an array" : "an object";
        }
    }
}
