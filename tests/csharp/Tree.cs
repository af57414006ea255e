// Tree.cs: what the tool's and the check's tests share: where the build and
// the sources are (NNN_BUILD, NNN_ROOT: tests/tests.mk sets them), and
// running a program with its stdin, stdout, stderr and exit status.
using System;
using System.Diagnostics;
using System.IO;
using System.Json;
using System.Text;

namespace Nnn.Tests
{
    /// <summary>A finished process: its exit status and what it wrote.</summary>
    sealed class Ran
    {
        public int Exit;
        public string Out = "", Err = "";

        public override string ToString() => "exit " + Exit + "\nstdout:\n" + Out + "\nstderr:\n" + Err;
    }

    static class Tree
    {
        static string Need(string name)
        {
            string v = Environment.GetEnvironmentVariable(name);
            if (string.IsNullOrEmpty(v))
                throw new InvalidOperationException(name + " is not set: run the tests with make test-csharp");
            return v;
        }

        /// <summary>The build folder (absolute).</summary>
        public static string Build => Need("NNN_BUILD");
        /// <summary>The source tree (absolute).</summary>
        public static string Source => Need("NNN_ROOT");
        /// <summary>The build's C# compiler and its flags.</summary>
        public static string Mcs => Need("NNN_CS_MCS");
        /// <summary>The shared folder beside the tree (the real files: corpus/real).</summary>
        public static string Shared => Need("NNN_SHARED");
        public static string Nnnkit => Path.Combine(Build, "nnnkit");
        public static string Tool => Path.Combine(Build, "csharp", "nnn-cs.exe");
        public static string Corpus => Path.Combine(Build, "conformance");

        /// <summary>Runs <paramref name="file"/> with <paramref name="args"/> (one string, shell-free
        /// quoting as Process takes it), <paramref name="stdin"/> as its input bytes.</summary>
        public static Ran Run(string file, string args, byte[] stdin = null, string cwd = null)
        {
            var psi = new ProcessStartInfo(file, args)
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                StandardOutputEncoding = new UTF8Encoding(false),
                StandardErrorEncoding = new UTF8Encoding(false),
                WorkingDirectory = cwd ?? Source,
            };
            using (var p = Process.Start(psi))
            {
                var err = p.StandardError.ReadToEndAsync();
                var outp = p.StandardOutput.ReadToEndAsync();
                if (stdin != null)
                {
                    try
                    {
                        p.StandardInput.BaseStream.Write(stdin, 0, stdin.Length);
                    }
                    catch (IOException)
                    {
                        // it ended before reading everything: judged by what it wrote
                    }
                }
                try
                {
                    p.StandardInput.Close();
                }
                catch (IOException)
                {
                }
                p.WaitForExit();
                return new Ran { Exit = p.ExitCode, Out = outp.Result, Err = err.Result };
            }
        }

        /// <summary>nnn-cs.exe run by mono.</summary>
        public static Ran Tool_(string args, byte[] stdin = null) => Run("mono", "--debug " + Quote(Tool) + " " + args, stdin);

        /// <summary><paramref name="s"/> as one argument of a ProcessStartInfo command line.</summary>
        public static string Quote(string s) => "\"" + s.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";

        /// <summary>A new empty folder under the system's temporary folder.</summary>
        public static string TempDir()
        {
            string d = Path.Combine(Path.GetTempPath(), "nnn-cs-test-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(d);
            return d;
        }

        /// <summary>The conformance manifest's first case of kind <paramref name="kind"/>
        /// (valid, structural, semantic).</summary>
        public static JsonObject Case(string kind)
        {
            var cases = (JsonArray)((JsonObject)JsonValue.Parse(File.ReadAllText(Path.Combine(Corpus, "manifest.json"))))["cases"];
            foreach (JsonObject c in cases)
                if ((string)c["kind"] == kind)
                    return c;
            throw new InvalidOperationException("no " + kind + " case in " + Corpus + "/manifest.json: make conformance");
        }

        /// <summary>A case's file, absolute.</summary>
        public static string CaseFile(JsonObject c) => Path.Combine(Corpus, (string)c["file"]);
    }
}
