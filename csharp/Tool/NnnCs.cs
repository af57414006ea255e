// NnnCs.cs: nnn-cs.exe, the command-line tool over the C# codec (`mono
// nnn-cs.exe COMMAND`): decode, validate and round-trip .nnn files, and
// serve the conformance kit's testee protocol. Exits as nnnkit does:
// 0 valid, 1 invalid, 2 usage or a system error (I/O). A problem is printed
// on stderr as `FILE: path @0xOFFSET: message` (Problem.ToString()).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;

namespace Nnn.Tool
{
    /// <summary>The tool's entry point and commands. A program that registers plugin types
    /// (a fragment's generated <c>Register</c>) runs the tool over its registry with
    /// <see cref="Run"/>: C# has no dlopen, so a plugin is compiled in (docs/csharp.md).</summary>
    public static partial class NnnCs
    {
        const int Valid = 0, Invalid = 1, UsageExit = 2;

        const string Help =
            "usage: mono nnn-cs.exe COMMAND [OPTIONS] FILE\n" +
            "Reads, checks and writes .nnn models with nnnkit's C# codec (Nnn.dll, generated from the schema).\n" +
            "\n" +
            "Commands:\n" +
            "  decode FILE            decode FILE strictly (the bytes as the format lays them out, nothing after)\n" +
            "  validate [--input-shape 1,28,28,1] FILE\n" +
            "                         decode FILE and check every rule, and with --input-shape (batch axis\n" +
            "                         first, whole numbers separated by commas) the shapes through the model;\n" +
            "                         every problem on its own line\n" +
            "  roundtrip FILE [OUT]   decode FILE and encode the model again: written atomically to OUT, or,\n" +
            "                         without OUT, compared with FILE's bytes (the first difference is a problem)\n" +
            "  testee                 speak the conformance kit's testee protocol on stdin and stdout (JSON\n" +
            "                         lines: hello, decode, validate, encode, and run where libnnn loads)\n" +
            "  -h, --help             this help\n" +
            "\n" +
            "Problems go to stderr as FILE: path @0xOFFSET: message.\n" +
            "Exit status:\n" +
            "  0  the model is valid (decoded, round-tripped; testee: stdin ended)\n" +
            "  1  the model is invalid (every problem is listed)\n" +
            "  2  a usage error (the option or file to fix is named) or a system error (I/O)\n";

        static int Main(string[] args) => Run(args, null);

        /// <summary>The tool on <paramref name="args"/> (as its command line takes them), reading
        /// the plugin types of <paramref name="registry"/> (null: none); returns the exit status.</summary>
        public static int Run(string[] args, Registry registry)
        {
            if (args.Length == 0)
                return Usage("no command given");
            string cmd = args[0];
            var rest = new List<string>(args);
            rest.RemoveAt(0);
            if (cmd == "-h" || cmd == "--help" || cmd == "help")
            {
                Console.Out.Write(Help);
                return Valid;
            }
            if (rest.Contains("-h") || rest.Contains("--help"))
            {
                Console.Out.Write(Help);
                return Valid;
            }
            switch (cmd)
            {
                case "decode": return Decode(rest, registry);
                case "validate": return Validate(rest, registry);
                case "roundtrip": return Roundtrip(rest, registry);
                case "testee": return TesteeMain(rest, registry);
                default: return Usage("unknown command '" + cmd + "'");
            }
        }

        static int Usage(string message)
        {
            Console.Error.WriteLine("nnn-cs: " + message);
            Console.Error.WriteLine("see 'mono nnn-cs.exe --help'");
            return UsageExit;
        }

        /// <summary>The arguments as FILE (and OUT when <paramref name="outs"/>), or a usage error.</summary>
        static string[] Files(string cmd, List<string> args, int min, int max)
        {
            foreach (string a in args)
                if (a.StartsWith("-", StringComparison.Ordinal) && a != "-")
                    throw new UsageError(cmd + ": unknown option '" + a + "'");
            if (args.Count < min)
                throw new UsageError(cmd + ": no FILE given");
            if (args.Count > max)
                throw new UsageError(cmd + ": too many arguments ('" + args[max] + "')");
            foreach (string a in args)
                if (a == "-")
                    throw new UsageError(cmd + ": '-' (stdin or stdout) is not read or written here: name a file");
            return args.ToArray();
        }

        sealed class UsageError : Exception
        {
            public UsageError(string message) : base(message) { }
        }

        /// <summary>Prints a problem of <paramref name="file"/>; its exit status: 2 for I/O, 1 otherwise.</summary>
        static int Fail(string file, Problem p)
        {
            Console.Error.WriteLine(file + ": " + p);
            return p.Code == Status.E_IO || p.Code == Status.E_NOMEM || p.Code == Status.E_USAGE ? UsageExit : Invalid;
        }

        static int Decode(List<string> args, Registry registry)
        {
            string file;
            try
            {
                file = Files("decode", args, 1, 1)[0];
            }
            catch (UsageError e)
            {
                return Usage(e.Message);
            }
            try
            {
                Model.Read(file, registry);
            }
            catch (NnnException e)
            {
                return Fail(file, e.Problem);
            }
            Console.Out.WriteLine(file + ": decoded");
            return Valid;
        }

        static int Validate(List<string> args, Registry registry)
        {
            long[] shape = null;
            string file;
            try
            {
                int i = args.IndexOf("--input-shape");
                if (i >= 0)
                {
                    if (i + 1 >= args.Count)
                        throw new UsageError("validate: --input-shape needs a shape such as 1,28,28,1");
                    shape = ParseShape(args[i + 1]);
                    args.RemoveRange(i, 2);
                }
                file = Files("validate", args, 1, 1)[0];
            }
            catch (UsageError e)
            {
                return Usage(e.Message);
            }
            IList<Problem> found;
            try
            {
                found = Model.Check(file, shape, registry); // every problem, as nnnkit validate lists them
            }
            catch (NnnException e)
            {
                return Fail(file, e.Problem);
            }
            foreach (Problem p in found)
                Console.Error.WriteLine(file + ": " + p);
            if (found.Count > 0)
                return Invalid;
            Console.Out.WriteLine(file + ": valid");
            return Valid;
        }

        /// <summary>An input shape: whole numbers from 1 separated by commas, none trailing.</summary>
        static long[] ParseShape(string text)
        {
            string[] parts = text.Split(',');
            var shape = new long[parts.Length];
            for (int i = 0; i < parts.Length; i++)
            {
                long d;
                bool digits = parts[i].Length > 0;
                foreach (char c in parts[i])
                    digits &= c >= '0' && c <= '9';
                if (!digits || !long.TryParse(parts[i], NumberStyles.None, CultureInfo.InvariantCulture, out d)
                    || d < 1 || d > int.MaxValue)
                    throw new UsageError("validate: --input-shape needs whole numbers from 1 to " + int.MaxValue
                        + " separated by commas, batch axis first (such as 1,28,28,1), not '" + text + "'");
                shape[i] = d;
            }
            return shape;
        }

        static int Roundtrip(List<string> args, Registry registry)
        {
            string[] files;
            try
            {
                files = Files("roundtrip", args, 1, 2);
            }
            catch (UsageError e)
            {
                return Usage(e.Message);
            }
            string file = files[0];
            byte[] bytes;
            try
            {
                bytes = File.ReadAllBytes(file);
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException || e is NotSupportedException
                                      || e is ArgumentException)
            {
                return Fail(file, new Problem(Status.E_IO, "", -1, "cannot read: " + e.Message));
            }
            try
            {
                Model m = Model.Read(bytes, registry);
                if (files.Length == 2)
                {
                    m.Write(files[1]);
                    Console.Out.WriteLine(file + ": written to " + files[1]);
                    return Valid;
                }
                byte[] again = m.ToBytes();
                int at = 0;
                while (at < bytes.Length && at < again.Length && bytes[at] == again[at])
                    at++;
                if (at == bytes.Length && at == again.Length)
                {
                    Console.Out.WriteLine(file + ": round trip byte-exact (" + bytes.Length + " bytes)");
                    return Valid;
                }
                Console.Error.WriteLine(file + ": @0x" + at.ToString("x", CultureInfo.InvariantCulture)
                    + ": the model encoded again (" + again.Length + " bytes) differs from the file ("
                    + bytes.Length + " bytes) from this byte on");
                return Invalid;
            }
            catch (NnnException e)
            {
                return Fail(file, e.Problem);
            }
        }

        static int TesteeMain(List<string> args, Registry registry)
        {
            if (args.Count > 0)
                return Usage("testee: unexpected argument '" + args[0] + "' (the requests come on stdin)");
            using (Stream input = Console.OpenStandardInput(), output = Console.OpenStandardOutput())
                return new Testee(output, registry).Serve(input) ? Valid : UsageExit;
        }
    }
}
