// Testee.cs: `nnn-cs testee`: the C# codec behind the conformance kit's
// testee protocol (docs/conformance.md, "The testee protocol"): one JSON
// request a line on stdin, one JSON answer a line on stdout, in order,
// flushed, until stdin ends. As runtime/cli/testee.c answers: the same
// codes, and path and offset null for a request that cannot be served.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;

namespace Nnn.Tool
{
    /// <summary>A request that cannot be served as sent: answered E_USAGE.</summary>
    sealed class BadRequest : Exception
    {
        public readonly bool Unsupported;

        public BadRequest(string message, bool unsupported = false) : base(message) { Unsupported = unsupported; }
    }

    /// <summary>The testee session: requests in, answers out.</summary>
    sealed class Testee
    {
        const int Protocol = 1;
        const string OpList = "hello, decode, validate, encode, run";
        // The largest rank libnnn takes: the binding's, which its layout test holds to
        // NNN_MAX_RANK (tests/csharp/NativeTests.cs).
        const int MaxRank = Native.MaxRank;

        readonly Stream output;
        readonly Registry registry; // the plugin types decode, validate and encode know

        public Testee(Stream output, Registry registry)
        {
            this.output = output;
            this.registry = registry;
        }

        /// <summary>Answers every request line of <paramref name="input"/>; false when an answer
        /// could not be written (said on stderr).</summary>
        public bool Serve(Stream input)
        {
            var line = new MemoryStream();
            var buf = new byte[65536];
            int n;
            while ((n = input.Read(buf, 0, buf.Length)) > 0)
            {
                int start = 0;
                for (int i = 0; i < n; i++)
                {
                    if (buf[i] != (byte)'\n')
                        continue;
                    line.Write(buf, start, i - start);
                    start = i + 1;
                    if (!Line(line.ToArray()))
                        return false;
                    line.SetLength(0);
                }
                line.Write(buf, start, n - start);
            }
            return line.Length == 0 || Line(line.ToArray());
        }

        bool Line(byte[] bytes)
        {
            string text;
            try
            {
                text = Utf8Strict.GetString(bytes);
            }
            catch (ArgumentException)
            {
                return Write(Usage(null, "the request line is not UTF-8: send one JSON object a line, in UTF-8", false));
            }
            if (text.Trim(' ', '\t', '\r', '\n').Length == 0)
                return true; // a blank line is no request
            return Write(Answer(text));
        }

        static readonly UTF8Encoding Utf8Strict = new UTF8Encoding(false, true);

        bool Write(string answer)
        {
            try
            {
                byte[] b = Utf8Strict.GetBytes(answer + "\n");
                output.Write(b, 0, b.Length);
                output.Flush();
                return true;
            }
            catch (IOException e)
            {
                Console.Error.WriteLine("nnn-cs testee: stdout: cannot write the answer: " + e.Message);
                return false;
            }
        }

        /// <summary>The answer line to one request line.</summary>
        public string Answer(string line)
        {
            long? id = null;
            try
            {
                object parsed;
                try
                {
                    parsed = Json.Parse(line);
                }
                catch (JsonError e)
                {
                    throw new BadRequest("not JSON (" + e.Message + "): send one JSON object a line, such as "
                        + "{\"id\": 1, \"op\": \"hello\", \"protocol\": 1}");
                }
                var req = parsed as Dictionary<string, object>;
                if (req == null)
                    throw new BadRequest("not a JSON object: send one object a line, with \"id\" and \"op\"");
                object idv, opv;
                req.TryGetValue("id", out idv);
                if (idv is long)
                    id = (long)idv;
                else
                    throw new BadRequest("id: " + (idv == null ? "missing" : "not an integer")
                        + "; send \"id\": an integer, which the answer repeats");
                req.TryGetValue("op", out opv);
                string op = opv as string;
                if (op == null)
                    throw new BadRequest("op: " + (opv == null ? "missing" : "not a string")
                        + "; send \"op\": one of " + OpList);
                switch (op)
                {
                    case "hello": return Hello(id.Value, req);
                    case "decode": return Decode(id.Value, req);
                    case "validate": return Validate(id.Value, req);
                    case "encode": return Encode(id.Value, req);
                    case "run": return Run(id.Value, req);
                    default:
                        throw new BadRequest("op: unknown op " + Json.Describe(op) + "; send one of " + OpList, true);
                }
            }
            catch (BadRequest e)
            {
                return Usage(id, e.Message, e.Unsupported);
            }
            catch (NnnException e)
            {
                return Refusal(id.Value, new List<Problem> { e.Problem });
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
            {
                // run's input .npy, or its output's folder (the codec says its own as NnnException)
                var p = new Problem(Status.E_IO, "", -1, e.Message);
                return Refusal(id.Value, new List<Problem> { p });
            }
            catch (Exception e)
            {
                // Never stop serving: a bug of ours is answered and logged.
                Console.Error.WriteLine("nnn-cs testee: request " + (id.HasValue ? id.Value.ToString(CultureInfo.InvariantCulture)
                    : "without an id") + ": " + e);
                return Usage(id, e.GetType().FullName + ": " + e.Message, false);
            }
        }

        static StringBuilder Head(long? id, bool ok)
        {
            var b = new StringBuilder("{\"id\": ");
            b.Append(id.HasValue ? id.Value.ToString(CultureInfo.InvariantCulture) : "null");
            return b.Append(ok ? ", \"ok\": true" : ", \"ok\": false");
        }

        static string Ok(long id) => Head(id, true).Append('}').ToString();

        static string Usage(long? id, string message, bool unsupported)
        {
            var b = Head(id, false);
            if (unsupported)
                b.Append(", \"unsupported\": true");
            b.Append(", \"code\": \"E_USAGE\", \"path\": null, \"offset\": null, \"message\": ").Str(message);
            return b.Append('}').ToString();
        }

        static void ProblemFields(StringBuilder b, Problem p)
        {
            b.Append("\"code\": ").Str(p.Code.ToString()).Append(", \"path\": ").Str(p.Path).Append(", \"offset\": ");
            b.Append(p.Offset >= 0 ? p.Offset.ToString(CultureInfo.InvariantCulture) : "null");
            b.Append(", \"message\": ").Str(p.Message);
        }

        /// <summary>The first problem at the top, every problem in "problems".</summary>
        static string Refusal(long id, IList<Problem> problems)
        {
            var b = Head(id, false).Append(", ");
            ProblemFields(b, problems[0]);
            b.Append(", \"problems\": [");
            for (int i = 0; i < problems.Count; i++)
            {
                b.Append(i > 0 ? ", {" : "{");
                ProblemFields(b, problems[i]);
                b.Append('}');
            }
            return b.Append("]}").ToString();
        }

        /// <summary>The path in field <paramref name="name"/>: <paramref name="what"/> says what the file is.</summary>
        static string PathField(Dictionary<string, object> req, string name, string what)
        {
            object v;
            req.TryGetValue(name, out v);
            string s = v as string;
            if (v == null)
                throw new BadRequest(name + ": missing; send \"" + name + "\": the absolute path of " + what);
            if (string.IsNullOrEmpty(s))
                throw new BadRequest(name + ": not a path; send \"" + name + "\": the absolute path of " + what + ", as a string");
            if (s == "-")
                throw new BadRequest(name + ": '-' cannot work here (stdin and stdout carry the requests and answers); "
                    + "send the absolute path of " + what);
            return s;
        }

        /// <summary>validate's optional input_shape: null when absent or null.</summary>
        static long[] ShapeField(Dictionary<string, object> req)
        {
            object v;
            if (!req.TryGetValue("input_shape", out v) || v == Json.Null)
                return null;
            var a = v as List<object>;
            bool good = a != null && a.Count >= 1 && a.Count <= MaxRank;
            var shape = new long[good ? a.Count : 0];
            for (int i = 0; good && i < a.Count; i++)
            {
                good = a[i] is long && (long)a[i] >= 1 && (long)a[i] <= int.MaxValue;
                if (good)
                    shape[i] = (long)a[i];
            }
            if (!good)
                throw new BadRequest("input_shape: expected null or an array of 1 to " + MaxRank + " whole numbers from 1 to "
                    + int.MaxValue + ", batch first, such as [1, 28, 28, 1]");
            return shape;
        }

        string Hello(long id, Dictionary<string, object> req)
        {
            object p;
            if (req.TryGetValue("protocol", out p) && !(p is long && (long)p == Protocol))
                throw new BadRequest("protocol: this testee speaks protocol " + Protocol + "; send \"protocol\": " + Protocol);
            var b = Head(id, true).Append(", \"name\": \"nnnkit-cs\", \"version\": ").Str(NnnCs.Version);
            b.Append(", \"protocol\": ").Append(Protocol).Append(", \"ops\": [\"decode\", \"validate\", \"encode\"");
            if (Runner.Loads())
                b.Append(", \"run\"");
            return b.Append("]}").ToString();
        }

        string Decode(long id, Dictionary<string, object> req)
        {
            Model.Read(PathField(req, "file", "the .nnn file to decode"), registry);
            return Ok(id);
        }

        string Validate(long id, Dictionary<string, object> req)
        {
            string file = PathField(req, "file", "the .nnn file to validate");
            long[] shape = ShapeField(req);
            // Every problem, as nnnkit testee's: decoding goes on past what leaves the framing intact.
            IList<Problem> found = Model.Check(file, shape, registry);
            return found.Count == 0 ? Ok(id) : Refusal(id, found);
        }

        string Encode(long id, Dictionary<string, object> req)
        {
            string file = PathField(req, "file", "the .nnn file to re-encode");
            string output = PathField(req, "output", "the .nnn file to write");
            Model.Read(file, registry).Write(output);
            return Ok(id);
        }

        string Run(long id, Dictionary<string, object> req)
        {
            string file = PathField(req, "file", "the .nnn model to run");
            string input = PathField(req, "input", "the float32 .npy input, samples first");
            string output = PathField(req, "output", "the .npy file to write the outputs to");
            if (!Runner.Loads())
                throw new BadRequest("run: libnnn cannot be loaded here (" + Runner.Why
                    + "): this testee reads, validates and writes only", true);
            Model.Read(file, registry); // the decoder's verdict first, as nnnkit testee gives it
            Runner.Run(file, input, output);
            return Ok(id);
        }
    }
}
